package cudakernel_test

// The CUDA sources compiled as host C++ (testdata/host: hostshim.h maps every CUDA
// intrinsic they use to the correctly rounded host operation) and checked bit for bit
// against the Go CPU twin: Philox blocks, normals, the fixed-point conversion, the
// carry-save combination, and whole bakes through mlp_fused's and the pipeline's own
// device code. What this cannot see — races, cp.async, the GPU's own instructions — is
// left to the GPU tests (gpuengine/cuda_test.go, docs/GPU.md).

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
	"github.com/whestbake/whestbake/gpuengine/internal/philox"
	"github.com/whestbake/whestbake/internal/seeds"
)

// The host builds of the sources (testdata/host); empty when g++ is missing.
var (
	harness     string // harness.cpp: mlp_fused, the pipeline kernels and the arithmetic
	tf32Harness string // tf32x3.cpp: mlp_tf32x3 with the tensor core emulated
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		if _, err := exec.LookPath("g++"); err != nil {
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "whestbake-harness")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		for _, h := range []struct {
			bin *string
			src string
		}{{&harness, "harness.cpp"}, {&tf32Harness, "tf32x3.cpp"}} {
			bin := filepath.Join(dir, strings.TrimSuffix(h.src, ".cpp"))
			// ISO C++ (no GNU fp-contract default), no contraction, no fast math: every
			// operation of the sources rounds exactly once, as on the GPU.
			args := []string{
				"-std=c++17",
				"-O2",
				"-ffp-contract=off",
				"-fno-fast-math",
				"-fno-strict-aliasing",
				"-Wall",
				"-Wextra",
				"-Werror",
				"-Wno-unknown-pragmas",
				"-I.",
				"-o",
				bin,
				"testdata/host/" + h.src,
			}
			if cpu.X86.HasFMA {
				// fmaf as one instruction; glibc's software fmaf rounds the same.
				args = append(args, "-mfma")
			}
			if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "g++ %s: %v\n%s", strings.Join(args, " "), err, out)
				return 1
			}
			*h.bin = bin
		}
		return m.Run()
	}())
}

func run(t *testing.T, stdin string, args ...string) []string {
	t.Helper()
	if harness == "" {
		t.Skip("g++ not found: the host build of the CUDA sources is not checked")
	}
	lines, err := runHarness(stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// runHarness runs the harness with stdin and returns its output lines.
func runHarness(stdin string, args ...string) ([]string, error) {
	return runBinary(harness, stdin, args...)
}

// runBinary runs bin with stdin and returns its output lines.
func runBinary(bin, stdin string, args ...string) ([]string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("harness %v: %v\n%s", args, err, errb.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

func hex32(s string) uint32 {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		panic(err)
	}
	return uint32(v)
}

func TestHostPhiloxBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var in strings.Builder
	var cases [][6]uint32
	cases = append(
		cases,
		[6]uint32{},
		[6]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)},
	)
	for i := 0; i < 2000; i++ {
		var words [6]uint32
		for k := range words {
			words[k] = rng.Uint32()
		}
		cases = append(cases, words)
	}
	for _, c := range cases {
		fmt.Fprintf(&in, "%x %x %x %x %x %x\n", c[0], c[1], c[2], c[3], c[4], c[5])
	}
	for i, line := range run(t, in.String(), "block") {
		c := cases[i]
		want := philox.Block([4]uint32{c[0], c[1], c[2], c[3]}, [2]uint32{c[4], c[5]})
		f := strings.Fields(line)
		for k := range want {
			if hex32(f[k]) != want[k] {
				t.Fatalf("Block(%x) word %d = %s, want %08x", c, k, f[k], want[k])
			}
		}
	}
}

// pairWords are the Box–Muller operands at the edges: radius words at the extremes of u
// and at the √2 fold of every binade, angle words at the quadrant and 2^-7 boundaries.
func pairWords(rng *rand.Rand) [][2]uint32 {
	ras := []uint32{0, 1, 2, 3, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff}
	for e := 23; e <= 32; e++ {
		for _, top := range []uint64{0xb504f3, 0xb504f4, 0x800000, 0xffffff} {
			for _, low := range []uint64{0, ^uint64(0)} {
				m := top<<(e-23) | low&(1<<(e-23)-1) | 1
				ras = append(ras, uint32(m>>1))
			}
		}
	}
	for r := uint32(0); r < 300; r++ {
		ras = append(ras, r*4099)
	}
	rbs := []uint32{0, 0x7f, 0x80, 0xff, 0x3fffff80, 0x3fffffff, 0x40000000, 0x7fffffff, 0x80000000,
		0xbfffffff, 0xc0000000, 0xffffff7f, 0xffffffff}
	var out [][2]uint32
	for _, a := range ras {
		for _, b := range rbs {
			out = append(out, [2]uint32{a, b})
		}
	}
	for len(out) < 100_000 {
		out = append(out, [2]uint32{rng.Uint32(), rng.Uint32()})
	}
	return out
}

var exhaustive = flag.Bool(
	"cudakernel.exhaustive",
	false,
	"TestHostRadiusExhaustive checks all 2^32 radius words",
)

// bm_radius divides and takes the square root by branch-free sequences of fmas
// (philox.cuh, wb_div_radius and wb_sqrt_radius), which are not correctly rounded for
// every operand. Their operands depend on the radius's 32-bit word alone, so checking
// both results and the radius against IEEE division and square root for every word
// proves them correctly rounded on every input they will ever see: go test ./gpuengine/internal/cudakernel -run RadiusExhaustive
// -cudakernel.exhaustive (about 6 minutes of two cores). Without the flag: every
// 65537th word, the words around each power of two and pairWords' edges.
func TestHostRadiusExhaustive(t *testing.T) {
	if harness == "" {
		t.Skip("g++ not found: the host build of the CUDA sources is not checked")
	}
	type span struct {
		lo, hi, step uint64
		edges        string
	}
	var spans []span
	if *exhaustive {
		n := uint64(runtime.GOMAXPROCS(0))
		for i := range n {
			spans = append(spans, span{i << 32 / n, (i + 1) << 32 / n, 1, ""})
		}
	} else {
		var edges strings.Builder
		for k := range 33 {
			for d := -3; d <= 3; d++ {
				fmt.Fprintf(&edges, "%x\n", uint32(int64(1)<<k+int64(d)))
			}
		}
		for _, w := range pairWords(rand.New(rand.NewPCG(1, 2)))[:1000] {
			fmt.Fprintf(&edges, "%x\n", w[0])
		}
		spans = append(spans, span{0, 1 << 32, 65537, edges.String()})
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		bad []string
	)
	for _, sp := range spans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines, err := runHarness(sp.edges, "radius", strconv.FormatUint(sp.lo, 10),
				strconv.FormatUint(sp.hi, 10), strconv.FormatUint(sp.step, 10))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				bad = append(bad, err.Error())
			case lines[len(lines)-1] != "bad 0":
				bad = append(bad, lines...)
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("bm_radius differs from IEEE division and square root:\n%s", strings.Join(bad, "\n"))
	}
}

func TestHostBoxMuller(t *testing.T) {
	cases := pairWords(rand.New(rand.NewPCG(5, 6)))
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "%x %x\n", c[0], c[1])
	}
	for i, line := range run(t, in.String(), "pair") {
		z0, z1 := philox.Pair(cases[i][0], cases[i][1])
		f := strings.Fields(line)
		if hex32(f[0]) != math.Float32bits(z0) || hex32(f[1]) != math.Float32bits(z1) {
			t.Fatalf(
				"Pair(%08x, %08x) = %s %s, want %08x %08x",
				cases[i][0],
				cases[i][1],
				f[0],
				f[1],
				math.Float32bits(z0),
				math.Float32bits(z1),
			)
		}
	}
}

// Input j of sample n under a key, ~1e5 triples including extreme counters and keys.
func TestHostNormals(t *testing.T) {
	type triple struct {
		key [2]uint32
		n   uint64
		j   int
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var cases []triple
	for _, key := range [][2]uint32{
		{0, 0},
		{^uint32(0), ^uint32(0)},
		{1, 0},
		{0x12345678, 0x9abcdef0},
	} {
		for _, n := range []uint64{
			0,
			1,
			31,
			32,
			1<<32 - 1,
			1 << 32,
			1<<32 + 1,
			1<<50 - 1,
			1<<63 - 1,
			^uint64(0),
		} {
			for _, j := range []int{0, 1, 2, 3, 4, 7, 255, 256, 511, 1023, 16383} {
				cases = append(cases, triple{key, n, j})
			}
		}
	}
	for len(cases) < 100_000 {
		cases = append(
			cases,
			triple{
				[2]uint32{rng.Uint32(), rng.Uint32()},
				rng.Uint64() >> rng.IntN(64),
				rng.IntN(1024),
			},
		)
	}
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "%x %x %x %d\n", c.key[0], c.key[1], c.n, c.j)
	}
	for i, line := range run(t, in.String(), "normal") {
		c := cases[i]
		w := philox.Block([4]uint32{uint32(c.n), uint32(c.n >> 32), uint32(c.j / 4), 0}, c.key)
		z := make([]float32, 4)
		z[0], z[1] = philox.Pair(w[0], w[1])
		z[2], z[3] = philox.Pair(w[2], w[3])
		if got := hex32(line); got != math.Float32bits(z[c.j%4]) {
			t.Fatalf(
				"key %x sample %d input %d = %08x, want %08x",
				c.key,
				c.n,
				c.j,
				got,
				math.Float32bits(z[c.j%4]),
			)
		}
	}
	// The Block/Pair composition above is the Sampler's, row for row.
	s := philox.Sampler{Key: [2]uint32{0x12345678, 0x9abcdef0}, Width: 19}
	row := make([]float32, 19)
	s.Fill(row, 1<<32+1, 1)
	var in2 strings.Builder
	for j := range row {
		fmt.Fprintf(&in2, "12345678 9abcdef0 %x %d\n", uint64(1<<32+1), j)
	}
	for j, line := range run(t, in2.String(), "normal") {
		if hex32(line) != math.Float32bits(row[j]) {
			t.Fatalf("Sampler.Fill input %d = %08x, host %s", j, math.Float32bits(row[j]), line)
		}
	}
}

// adversarialDoubles probe floor(v·2^64) at every boundary of its case analysis.
func adversarialDoubles(rng *rand.Rand) []float64 {
	vs := []float64{
		0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, 0x1p-1022 - 0x1p-1074, 0x1p-1022,
		0x1p-64, 0x1p-65, 0x1p-64 * (1 + 0x1p-52), 0x1p-64 * (1 - 0x1p-53), 0x1p-128, 0x1p-63,
		0x1p-12, 1 - 0x1p-53, 1, 1.5, 0x1p52 + 0.5, 0x1p63, 0x1p64 - 0x1p11, 0x1p64, 0x1p100,
		0x1p103 - 0x1p50, 0x1p103, math.MaxFloat64, math.Inf(1), math.NaN(), 1e-30,
		3.141592653589793, 12345.678e10,
	}
	for i := 0; i < 10_000; i++ {
		exp := 1023 - 90 + rng.IntN(90+105) // |v| from 2^-90 to past 2^103
		bits := uint64(exp)<<52 | rng.Uint64()>>12
		vs = append(vs, math.Float64frombits(bits))
	}
	n := len(vs)
	for i := 0; i < n; i++ {
		vs = append(vs, -vs[i])
	}
	return vs
}

func TestHostFixedPoint(t *testing.T) {
	vs := adversarialDoubles(rand.New(rand.NewPCG(9, 10)))
	var in strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&in, "%x\n", math.Float64bits(v))
	}
	for i, line := range run(t, in.String(), "fixed") {
		want, err := exact.Fixed(vs[i])
		f := strings.Fields(line)
		if bad := f[0] == "1"; bad != (err != nil) {
			t.Fatalf("floor(%v·2^64): host out-of-range %v, Go error %v", vs[i], bad, err)
		}
		if err != nil {
			continue
		}
		if got := strings.Join(f[1:], ""); got != want.String() {
			t.Fatalf("floor(%v·2^64) = %s, want %s", vs[i], got, want)
		}
	}
}

// Per-thread Fix192 sums flushed as carry-save digits, then decoded: the exact sum.
func TestHostCarrySave(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var in strings.Builder
	var want exact.Acc
	for i := 0; i < 20_000; i++ {
		// Up to ~2^100: carries through every limb.
		v := math.Ldexp(rng.NormFloat64(), rng.IntN(160)-60)
		if i%7 == 0 {
			v = -0x1p102 + float64(i)
		}
		if err := want.Add(v); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&in, "%d %x\n", rng.IntN(300), math.Float64bits(v))
	}
	got := decodeChunks(t, run(t, in.String(), "sum"), 1)
	if got[0] != want {
		t.Fatalf("carry-save total %s, want %s", got[0], want)
	}
}

// decodeChunks sums the harness's per-launch carry-save words, failing on divergence.
func decodeChunks(t *testing.T, lines []string, nv int) []exact.Acc {
	t.Helper()
	total := make([]exact.Acc, nv)
	for _, line := range lines {
		f := strings.Fields(line)
		switch f[0] {
		case "err":
			if f[1] != "0" {
				t.Fatalf("the kernel flagged divergence")
			}
		case "words":
			if len(f)-1 != cudakernel.Digits*nv {
				t.Fatalf("%d words, want %d", len(f)-1, cudakernel.Digits*nv)
			}
			words := make([]uint64, len(f)-1)
			for i, s := range f[1:] {
				var err error
				if words[i], err = strconv.ParseUint(s, 16, 64); err != nil {
					t.Fatal(err)
				}
			}
			for v, a := range cudakernel.DecodeWords(words, nv) {
				total[v].AddAcc(a)
			}
		}
	}
	return total
}

type bakeCase struct {
	w, d int
	n    int64
	seed uint64
}

// twin bakes c on the CPU twin and returns its key, weights and exact totals (from the
// final checkpoint, so the comparison is of integers, not of rounded means).
func twin(t *testing.T, c bakeCase) ([2]uint32, []float32, []exact.Acc) {
	t.Helper()
	st := seeds.DeriveV3(c.seed)
	w, err := seeds.Weights(c.w, c.d, st.Weight)
	if err != nil {
		t.Fatal(err)
	}
	job := gpuengine.Job{Weights: w, Sample: st.Sample, Threads: 2}
	spec := bakeapi.Spec{
		Width:    c.w,
		Depth:    c.d,
		NSamples: c.n,
		Sampler:  bakeapi.SamplerPhilox,
	}
	var last []string
	keepLast := func(cp gpuengine.Checkpoint) {
		last = append(append([]string{}, cp.LayerExact...), cp.SquareExact...)
	}
	cpu := gpuengine.CPU{}
	if _, err := cpu.BakeMLP(context.Background(), spec, job, nil, keepLast); err != nil {
		t.Fatal(err)
	}
	totals := make([]exact.Acc, len(last))
	for i, s := range last {
		if totals[i], err = exact.Parse(s); err != nil {
			t.Fatal(err)
		}
	}
	return gpuengine.PhiloxKey(job), w, totals
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func writeWeights(t *testing.T, w []float32) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weights.f32")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := binary.Write(bw, binary.LittleEndian, w); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func sameTotals(t *testing.T, what string, got, want []exact.Acc) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d totals, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: total %d = %s, want %s", what, i, got[i], want[i])
		}
	}
}

// make cuda-check compiles these networks' kernels with NVRTC; a new one goes into the
// networks of gpuengine/internal/cudacheck too.
var bakeCases = []bakeCase{
	{8, 3, 1000, 1}, {17, 2, 777, 2}, {64, 3, 500, 3}, {100, 2, 300, 4}, {256, 2, 161, 5},
}

// mlp_fused's device code, run CTA by CTA and thread by thread, gives the CPU twin's
// exact totals for ragged N, widths off the tiling, any chunking and any grid, with
// every shape the GPU's tiling sweep times (every plan of FusedPlans among them:
// resident weights and the 16-warp fallbacks).
func TestHostFusedMatchesCPUTwin(t *testing.T) {
	for _, c := range bakeCases {
		key, w, want := twin(t, c)
		shapes := cudakernel.TilingCandidates(c.w, c.d, h100Shared)
		if c.w == 17 || c.w == 64 {
			// Other tilings of the same network: the bits may not move.
			for _, alt := range []struct{ ct, tm, rt, ks int }{
				{4, 32, 1, 4},
				{8, 64, 4, 8},
				{16, 32, 2, 16},
			} {
				wp := (c.w + alt.ct - 1) / alt.ct * alt.ct
				s := cudakernel.FusedShape{
					W:  c.w,
					D:  c.d,
					WP: wp,
					TM: alt.tm,
					RT: alt.rt,
					CT: alt.ct,
					KS: alt.ks,
				}
				if err := s.Validate(h100Shared); err != nil {
					t.Fatal(err)
				}
				shapes = append(shapes, s)
			}
		}
		type schedule struct {
			chunk int64
			grid  int
		}
		for i, s := range shapes {
			path := writeWeights(t, cudakernel.PadWeights(w, c.w, c.d, s.WP))
			// Every schedule for the first shape; the tilings after it, two.
			scheds := []schedule{{c.n, 3}, {96, 2}}
			if i == 0 {
				scheds = append(scheds, schedule{c.n, 1}, schedule{160, 7})
			}
			for _, sched := range scheds {
				lines := run(
					t,
					"",
					"fused",
					strconv.Itoa(s.W),
					strconv.Itoa(s.WP),
					strconv.Itoa(s.D),
					strconv.Itoa(s.TM),
					strconv.Itoa(s.RT),
					strconv.Itoa(s.CT),
					strconv.Itoa(s.KS),
					strconv.Itoa(s.Lanes()),
					strconv.Itoa(b2i(s.Resident)),
					strconv.FormatInt(c.n, 10),
					fmt.Sprintf("%x", key[0]),
					fmt.Sprintf("%x", key[1]),
					path,
					strconv.FormatInt(sched.chunk, 10),
					strconv.Itoa(sched.grid),
				)
				sameTotals(
					t,
					fmt.Sprintf("%v N=%d chunk %d grid %d", s, c.n, sched.chunk, sched.grid),
					decodeChunks(t, lines, s.Values()),
					want,
				)
			}
		}
	}
}

// The pipeline's kernels with the reference layer in place of cublasSgemm give the
// CPU twin's exact totals too, for padded last chunks and any chunking.
func TestHostPipelineMatchesCPUTwin(t *testing.T) {
	for _, c := range bakeCases {
		key, w, want := twin(t, c)
		path := writeWeights(t, w)
		for _, sched := range []struct{ chunk, rows int64 }{{c.n, 64}, {c.n, 1024}, {224, 96}} {
			lines := run(
				t,
				"",
				"pipeline",
				strconv.Itoa(c.w),
				strconv.Itoa(c.d),
				strconv.FormatInt(c.n, 10),
				fmt.Sprintf("%x", key[0]),
				fmt.Sprintf("%x", key[1]),
				path,
				strconv.FormatInt(sched.chunk, 10),
				strconv.FormatInt(sched.rows, 10),
			)
			sameTotals(
				t,
				fmt.Sprintf(
					"pipeline W%d D%d N=%d chunk %d rows %d",
					c.w,
					c.d,
					c.n,
					sched.chunk,
					sched.rows,
				),
				decodeChunks(t, lines, (c.d+1)*c.w),
				want,
			)
		}
	}
}

// Exploding activations set the kernels' divergence flag, as the CPU twin errors.
func TestHostDivergenceIsFlagged(t *testing.T) {
	const w, d, n = 8, 2, 64
	big := make([]float32, d*w*w)
	for i := range big {
		big[i] = 1e30
	}
	s, err := cudakernel.PlanFused(w, d, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	fused := run(
		t,
		"",
		"fused",
		strconv.Itoa(w),
		strconv.Itoa(s.WP),
		strconv.Itoa(d),
		strconv.Itoa(s.TM),
		strconv.Itoa(s.RT),
		strconv.Itoa(s.CT),
		strconv.Itoa(s.KS),
		strconv.Itoa(s.Lanes()),
		strconv.Itoa(b2i(s.Resident)),
		strconv.Itoa(n),
		"1",
		"2",
		writeWeights(t, cudakernel.PadWeights(big, w, d, s.WP)),
		strconv.Itoa(n),
		"1",
	)
	pipe := run(
		t,
		"",
		"pipeline",
		strconv.Itoa(w),
		strconv.Itoa(d),
		strconv.Itoa(n),
		"1",
		"2",
		writeWeights(t, big),
		strconv.Itoa(n),
		"64",
	)
	for name, lines := range map[string][]string{"fused": fused, "pipeline": pipe} {
		if lines[0] != "err 1" {
			t.Errorf("%s: %q, want the divergence flag", name, lines[0])
		}
	}
	st := seeds.DeriveV3(1)
	spec := bakeapi.Spec{
		Width:    w,
		Depth:    d,
		NSamples: n,
		Sampler:  bakeapi.SamplerPhilox,
	}
	bigJob := gpuengine.Job{Weights: big, Sample: st.Sample}
	cpu := gpuengine.CPU{}
	if _, err := cpu.BakeMLP(context.Background(), spec, bigJob, nil, nil); err == nil {
		t.Error("the CPU twin accepted the diverging network")
	}
}
