package cudakernel_test

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// H100 (sm_90) opt-in shared memory per block.
const h100Shared = 232448

// The Go constants that describe the sources must be the sources' own values.
func TestConstantsMatchSources(t *testing.T) {
	all := cudakernel.FusedSource + cudakernel.PipelineSource
	for _, h := range cudakernel.Headers() {
		all += h.Source
	}
	for name, want := range map[string]int{
		"WB_TILE":         cudakernel.Tile,
		"WB_DIGITS":       cudakernel.Digits,
		"P_TILES_PER_CTA": cudakernel.PipelineTilesPerCTA,
		"P_COLS_PER_CTA":  cudakernel.PipelineColsPerCTA,
	} {
		m := regexp.MustCompile(`#define ` + name + ` +(\d+)`).FindStringSubmatch(all)
		if m == nil {
			t.Fatalf("#define %s not found in the sources", name)
		}
		if got, _ := strconv.Atoi(m[1]); got != want {
			t.Errorf("%s = %d in the sources, %d in Go", name, got, want)
		}
	}
	if cudakernel.Tile != gpuengine.PhiloxTile {
		t.Errorf(
			"cudakernel.Tile %d != gpuengine.PhiloxTile %d",
			cudakernel.Tile,
			gpuengine.PhiloxTile,
		)
	}
	// Every #include resolves to a header handed to NVRTC.
	names := map[string]bool{}
	for _, h := range cudakernel.Headers() {
		names[h.Name] = true
	}
	for _, m := range regexp.MustCompile(`#include "([^"]+)"`).FindAllStringSubmatch(all, -1) {
		if !names[m[1]] {
			t.Errorf("#include %q is not among cudakernel.Headers()", m[1])
		}
	}
}

// Defines sets the macros each source requires, and otherwise only those it reads with
// a default (#ifndef).
func TestDefinesMatchSources(t *testing.T) {
	fused, err := cudakernel.PlanFused(64, 2, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, src string
		defines   []string
	}{
		{"fused.cu", cudakernel.FusedSource, fused.Defines()},
		{"pipeline.cu", cudakernel.PipelineSource, cudakernel.PlanPipeline(64, 2, 1000).Defines()},
	} {
		var want, got []string
		guarded := regexp.MustCompile(`!defined\((WB_\w+)\)`)
		for _, m := range guarded.FindAllStringSubmatch(c.src, -1) {
			want = append(want, m[1])
		}
		optional := map[string]bool{}
		for _, m := range regexp.MustCompile(`#ifndef (WB_\w+)`).FindAllStringSubmatch(c.src, -1) {
			optional[m[1]] = true
		}
		for _, d := range c.defines {
			name, _, _ := strings.Cut(strings.TrimPrefix(d, "-D"), "=")
			if !optional[name] {
				got = append(got, name)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s requires %v, Defines gives %v", c.name, want, got)
		}
	}
}

func TestOptionsPinTheArithmetic(t *testing.T) {
	for _, c := range []struct {
		target cudakernel.Target
		arch   string
	}{
		{cudakernel.Target{Major: 9}, "--gpu-architecture=sm_90"},
		{cudakernel.Target{Major: 9, PTX: true}, "--gpu-architecture=compute_90"},
	} {
		opts := cudakernel.Options(c.target, []string{"-DWB_W=256"})
		for _, want := range []string{
			c.arch,
			"--fmad=false",
			"--ftz=false",
			"--prec-div=true",
			"--prec-sqrt=true",
			"-DWB_W=256",
		} {
			if !slices.Contains(opts, want) {
				t.Errorf("options %q lack %s", opts, want)
			}
		}
		for _, o := range opts {
			if strings.Contains(o, "fast") {
				t.Errorf("option %s would break bit-exactness", o)
			}
		}
		// The cubin's ptxas report is the resource check that holds on the device.
		if verbose := slices.Contains(opts, "--ptxas-options=-v"); verbose == c.target.PTX {
			t.Errorf("%s: --ptxas-options=-v present = %v", c.target.Arch(), verbose)
		}
	}
}

func TestPlanFused(t *testing.T) {
	s, err := cudakernel.PlanFused(256, 8, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	// The production shape (docs/GPU.md, "Plan B for registers"): 128-sample
	// tiles, 8×16 outputs per thread, 32-row slices, their loop unrolled whole (the
	// fastest measured on an H100).
	want := cudakernel.FusedShape{
		W:  256,
		D:  8,
		WP: 256,
		TM: 128,
		RT: 8,
		CT: 16,
		KS: 32,
		KU: 8,
	}
	if s != want {
		t.Errorf("PlanFused(256, 8) = %+v, want %+v", s, want)
	}
	if s.Threads() != 256 || s.SharedBytes() != 196608 || s.Values() != 2304 {
		t.Errorf("threads %d, shared %d, values %d", s.Threads(), s.SharedBytes(), s.Values())
	}
	for _, w := range []int{1, 3, 8, 17, 64, 65, 100, 129, 256, 512, 1000, 1024} {
		s, err := cudakernel.PlanFused(w, 3, h100Shared)
		if err != nil {
			t.Errorf("W=%d: %v", w, err)
			continue
		}
		if err := s.Validate(h100Shared); err != nil {
			t.Errorf("W=%d: planned shape invalid: %v", w, err)
		}
		if s.WP < w || s.WP%4 != 0 {
			t.Errorf("W=%d: WP=%d", w, s.WP)
		}
	}
	if _, err := cudakernel.PlanFused(4096, 2, h100Shared); err == nil ||
		!strings.Contains(err.Error(), "cublas") {
		t.Errorf("W=4096 must be refused with a pointer to the cublas path, got %v", err)
	}
}

// At the 255-register cap the production tiling has no headroom: the plans behind it
// halve the fragment, and are valid shapes of the same network.
func TestFusedPlansFallBackToSmallerFragments(t *testing.T) {
	plans, err := cudakernel.FusedPlans(256, 8, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	want := []cudakernel.FusedShape{
		{W: 256, D: 8, WP: 256, TM: 128, RT: 8, CT: 16, KS: 32, KU: 8},
		{W: 256, D: 8, WP: 256, TM: 128, RT: 4, CT: 16, KS: 32, KU: 8}, // 512 threads: 128 registers each
		{W: 256, D: 8, WP: 256, TM: 128, RT: 4, CT: 16, KS: 16},        // the same, loop rolled
		{W: 256, D: 8, WP: 256, TM: 64, RT: 4, CT: 16, KS: 16},         // 256 threads: 255 registers each
	}
	if !slices.Equal(plans, want) {
		t.Errorf("FusedPlans(256, 8) = %v, want %v", plans, want)
	}
	for _, w := range []int{129, 512, 1000} {
		plans, err := cudakernel.FusedPlans(w, 2, h100Shared)
		if err != nil || len(plans) < 2 {
			t.Fatalf("W=%d: %v, %v", w, plans, err)
		}
		for _, p := range plans[1:] {
			if p.RT*p.CT != 64 || p.Validate(h100Shared) != nil {
				t.Errorf("W=%d: fallback %v", w, p)
			}
		}
		// Up to W=512 a 256-thread CTA exists (at W=1000 even 32-sample tiles need 504).
		if last := plans[len(plans)-1]; w <= 512 && last.Threads() > 256 {
			t.Errorf(
				"W=%d: the last fallback %v has %d threads: its registers are capped below 255",
				w,
				last,
				last.Threads(),
			)
		}
	}
	// Narrow networks use at most 64 accumulators already: nothing to fall back to.
	if plans, _ := cudakernel.FusedPlans(100, 4, h100Shared); len(plans) != 1 {
		t.Errorf("W=100: %v", plans)
	}
}

// ChooseFused is driven by a fake compile report: the first spill-free plan wins and
// every module not kept is discarded exactly once.
func TestChooseFused(t *testing.T) {
	plans, _ := cudakernel.FusedPlans(256, 8, h100Shared)
	run := func(
		spills map[int]bool,
		fail int,
	) (cudakernel.FusedShape, int, []string, []int, error) {
		var discarded []int
		compile := func(s cudakernel.FusedShape) (int, string, error) {
			i := slices.Index(plans, s)
			if i == fail {
				return 0, "", errors.New("nvrtc: boom")
			}
			if spills[i] {
				return i, "8 B spill stores", nil
			}
			return i, "", nil
		}
		s, m, notes, err := cudakernel.ChooseFused(
			plans,
			compile,
			func(m int) { discarded = append(discarded, m) },
		)
		return s, m, notes, discarded, err
	}
	if s, m, notes, gone, err := run(nil, -1); err != nil || s != plans[0] || m != 0 ||
		len(notes) != 0 ||
		len(gone) != 0 {
		t.Errorf("no spill: %v %d %q %v %v", s, m, notes, err, gone)
	}
	if s, m, notes, gone, err := run(map[int]bool{0: true}, -1); err != nil || s != plans[1] ||
		m != 1 ||
		len(notes) != 2 ||
		!slices.Equal(gone, []int{0}) {
		t.Errorf("first spills: %v %d %q %v %v", s, m, notes, err, gone)
	}
	if s, m, _, gone, err := run(map[int]bool{0: true, 1: true}, -1); err != nil || s != plans[2] ||
		m != 2 ||
		!slices.Equal(gone, []int{1, 0}) {
		t.Errorf("two spill: %v %d %v %v", s, m, err, gone)
	}
	all := map[int]bool{}
	var rest []int
	for i := range plans {
		all[i] = true
		if i > 0 {
			rest = append(rest, i)
		}
	}
	if s, m, notes, gone, err := run(all, -1); err != nil ||
		s != plans[0] ||
		m != 0 ||
		!slices.Equal(gone, rest) ||
		!strings.Contains(notes[len(notes)-1], "every tiling spills") {
		t.Errorf("all spill: %v %d %q %v %v", s, m, notes, err, gone)
	}
	if _, _, _, gone, err := run(map[int]bool{0: true}, 1); err == nil ||
		!slices.Equal(gone, []int{0}) {
		t.Errorf(
			"a compile error must end the choice and release the kept module: %v %v",
			err,
			gone,
		)
	}
}

func TestFusedShapeValidate(t *testing.T) {
	good := cudakernel.FusedShape{
		W:  17,
		D:  2,
		WP: 20,
		TM: 64,
		RT: 8,
		CT: 4,
		KS: 4,
	}
	if err := good.Validate(h100Shared); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*cudakernel.FusedShape){
		"CT":      func(s *cudakernel.FusedShape) { s.CT = 6 },
		"RT":      func(s *cudakernel.FusedShape) { s.RT = 9 },
		"WP":      func(s *cudakernel.FusedShape) { s.WP = 24 },
		"TM":      func(s *cudakernel.FusedShape) { s.TM = 48 },
		"KS":      func(s *cudakernel.FusedShape) { s.KS = 8 },
		"threads": func(s *cudakernel.FusedShape) { s.TM, s.RT = 256, 1 },
	} {
		s := good
		mut(&s)
		if s.Validate(h100Shared) == nil {
			t.Errorf("%s: %+v accepted", name, s)
		}
	}
	if good.Validate(good.SharedBytes()-1) == nil {
		t.Errorf("%+v accepted with too little shared memory", good)
	}
	if g := good.Grid(1000, 132); g != 16 {
		t.Errorf("Grid(1000) = %d, want 16 tiles", g)
	}
	if g := good.Grid(1<<20, 132); g != 132 {
		t.Errorf("Grid(2^20) = %d, want the device's 132", g)
	}
}

func TestPadWeights(t *testing.T) {
	w, d, wp := 3, 2, 8
	src := make([]float32, d*w*w)
	for i := range src {
		src[i] = float32(i + 1)
	}
	got := cudakernel.PadWeights(src, w, d, wp)
	for l := 0; l < d; l++ {
		for k := 0; k < wp; k++ {
			for c := 0; c < wp; c++ {
				want := float32(0)
				if k < w && c < w {
					want = src[(l*w+k)*w+c]
				}
				if v := got[(l*wp+k)*wp+c]; v != want {
					t.Fatalf("layer %d [%d][%d] = %v, want %v", l, k, c, v, want)
				}
			}
		}
	}
}

func TestPlanPipeline(t *testing.T) {
	p := cudakernel.PlanPipeline(256, 8, cudakernel.DefaultStep)
	if p.Rows != 1<<18 {
		t.Errorf("rows %d, want 2^18 (256 MiB buffers)", p.Rows)
	}
	if x, y := p.SumGrid(); x != 2 || y != 256 {
		t.Errorf("SumGrid = %d×%d", x, y)
	}
	if p := cudakernel.PlanPipeline(17, 2, 100); p.Rows != 128 {
		t.Errorf("a 100-sample step needs 128 rows, got %d", p.Rows)
	}
	if p := cudakernel.PlanPipeline(1<<14, 2, cudakernel.MaxStep); p.Rows%cudakernel.Tile != 0 ||
		p.Rows*4*(1<<14) > 256<<20 {
		t.Errorf("wide rows %d", p.Rows)
	}
	// At W=1 the 256 MiB buffer holds 2^26 rows: 65,536 row groups of relu_tilesum,
	// one past CUDA's grid.y limit of 65,535. The chunk stops at the limit.
	for _, step := range []int64{1 << 26, cudakernel.MaxStep} {
		p := cudakernel.PlanPipeline(1, 1, step)
		if _, y := p.SumGrid(); y != 65535 || p.Rows != 65535*1024 {
			t.Errorf(
				"W=1, step %d: rows %d, grid.y %d; want 65535 groups of 1024 rows",
				step,
				p.Rows,
				y,
			)
		}
	}
	if _, y := cudakernel.PlanPipeline(2, 1, cudakernel.MaxStep).SumGrid(); y != 32768 {
		t.Errorf("W=2: grid.y %d, want 2^15 (the buffer, not the grid, limits it)", y)
	}
}

func TestStep(t *testing.T) {
	for in, want := range map[int]int64{
		0:       cudakernel.DefaultStep,
		1:       32,
		32:      32,
		33:      64,
		1 << 40: cudakernel.MaxStep,
	} {
		if got := cudakernel.Step(in); got != want {
			t.Errorf("Step(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestPackKey(t *testing.T) {
	if got := cudakernel.PackKey([2]uint32{0x89abcdef, 0x01234567}); got != 0x0123456789abcdef {
		t.Errorf("PackKey = %x", got)
	}
}

// Carry-save words against big integers: Σ_d word_d·2^(32d) mod 2^192.
func TestDecodeWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const nv = 50
	words := make([]uint64, cudakernel.Digits*nv)
	for i := range words {
		switch i % 3 {
		case 0:
			words[i] = rng.Uint64()
		case 1:
			words[i] = ^uint64(0)
		default:
			words[i] = rng.Uint64() >> 20
		}
	}
	got := cudakernel.DecodeWords(words, nv)
	mod := new(big.Int).Lsh(big.NewInt(1), 192)
	half := new(big.Int).Rsh(mod, 1)
	for v := 0; v < nv; v++ {
		want := new(big.Int)
		for d := 0; d < cudakernel.Digits; d++ {
			x := new(big.Int).SetUint64(words[d*nv+v])
			want.Add(want, x.Lsh(x, uint(32*d)))
		}
		want.Mod(want, mod)
		if want.Cmp(half) >= 0 { // two's complement
			want.Sub(want, mod)
		}
		if got[v].Int().Cmp(want) != 0 {
			t.Fatalf("value %d: %v, want %v", v, got[v].Int(), want)
		}
	}
	var zero exact.Acc
	if cudakernel.DecodeWords(make([]uint64, cudakernel.Digits), 1)[0] != zero {
		t.Error("zero words must decode to zero")
	}
}
