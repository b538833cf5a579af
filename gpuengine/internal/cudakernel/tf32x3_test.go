package cudakernel_test

// mlp_tf32x3 on the host (testdata/host/tf32x3.cpp, the tensor core emulated by
// tc_emulate.h) against a second implementation of the 3xTF32 scheme written here from
// its definition, on plain matrices: the kernel's fragment indexing, splits, tiling,
// chunking and grid may move no bit. The tensor core's own summation is a model (tcModel,
// the same as tc_emulate.h's); every check runs under several, so what is proven is the
// kernel's data movement, whatever the hardware's rounding.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
	"github.com/whestbake/whestbake/gpuengine/internal/philox"
)

// tcModel is a tensor core's summation (tc_emulate.h): an accumulator and kb products
// aligned to their largest exponent, each cut toward zero to 24+guard bits below it,
// summed exactly and rounded to FP32 toward zero, or to nearest with rn.
type tcModel struct {
	kb, guard int
	rn        bool
}

// models: blocks of four without a guard bit (A100-like, Fasi et al. 2021), of eight with
// three guard bits, and a near-exact sum rounded to nearest.
var models = []tcModel{{4, 0, false}, {8, 3, false}, {8, 30, true}}

func (m tcModel) String() string { return fmt.Sprintf("kb%d_guard%d_rn%v", m.kb, m.guard, m.rn) }

// dot is d = c + Σ p over one step of eight k, in blocks of kb.
func (m tcModel) dot(c float32, p [8]float64) float32 {
	for k0 := 0; k0 < 8; k0 += m.kb {
		c = m.block(c, p[k0:k0+m.kb])
	}
	return c
}

func (m tcModel) block(c float32, p []float64) float32 {
	emax, found := math.MinInt, false
	top := func(v float64) {
		if v != 0 {
			_, e := math.Frexp(v)
			emax, found = max(emax, e), true
		}
	}
	top(float64(c))
	for _, v := range p {
		top(v)
	}
	if !found {
		return 0
	}
	q := emax - 24 - m.guard
	s := int64(math.Trunc(math.Ldexp(float64(c), -q)))
	for _, v := range p {
		s += int64(math.Trunc(math.Ldexp(v, -q)))
	}
	return m.round(s, q)
}

// round is s·2^e in FP32, s exact.
func (m tcModel) round(s int64, e int) float32 {
	if s == 0 {
		return 0
	}
	u := uint64(s)
	if s < 0 {
		u = uint64(-s)
	}
	if drop := 64 - bits.LeadingZeros64(u) - 24; drop > 0 {
		rem, half := u&(1<<drop-1), uint64(1)<<(drop-1)
		u >>= drop
		if m.rn && (rem > half || rem == half && u&1 == 1) {
			u++
		}
		e += drop
	}
	v := float32(math.Ldexp(float64(u), e))
	if s < 0 {
		return -v
	}
	return v
}

// split is the scheme's split, written from its definition: big = the low 13 bits
// cleared; small = x − big rounded to TF32, to nearest with ties away from zero.
func split(x float32) (big, small float32) {
	big = math.Float32frombits(math.Float32bits(x) & 0xffffe000)
	r := float64(x - big)
	if r == 0 {
		return big, 0
	}
	_, e := math.Frexp(r) // r = f·2^e, f in [0.5, 1): keep 11 significant bits
	unit := math.Ldexp(1, e-11)
	q := math.Floor(math.Abs(r)/unit + 0.5) // ties away from zero
	return big, float32(math.Copysign(q*unit, r))
}

// tf32Forward is one layer of the scheme for one row: per output, per step of eight k
// from zero, small·big, big·small, big·big through the tensor core, then added to the
// FP32 accumulator to nearest; relu.
func tf32Forward(m tcModel, x []float32, w []float32, width int) []float32 {
	xb, xs := make([]float32, width), make([]float32, width)
	for k, v := range x {
		xb[k], xs[k] = split(v)
	}
	y := make([]float32, width)
	for j := range width {
		var acc float32
		for k0 := 0; k0 < width; k0 += 8 {
			var parts [3][8]float64
			for i := range 8 {
				if k := k0 + i; k < width {
					wb, ws := split(w[k*width+j])
					parts[0][i] = float64(xs[k]) * float64(wb)
					parts[1][i] = float64(xb[k]) * float64(ws)
					parts[2][i] = float64(xb[k]) * float64(wb)
				}
			}
			var p float32
			for _, part := range parts {
				p = m.dot(p, part)
			}
			acc += p
		}
		y[j] = max(acc, 0)
	}
	return y
}

// tf32Totals bakes c's samples through the scheme and returns the exact totals (D·W
// layer sums, then W sums of squares), tile by tile as docs/ALGORITHM.md sums them.
func tf32Totals(t *testing.T, m tcModel, c bakeCase, key [2]uint32, w []float32) []exact.Acc {
	t.Helper()
	sampler := philox.Sampler{Key: key, Width: c.w}
	totals := make([]exact.Acc, (c.d+1)*c.w)
	rows := make([][][]float32, c.d) // layer, row of the tile, column
	add := func(i int, v float64) {
		if err := totals[i].Add(v); err != nil {
			t.Fatal(err)
		}
	}
	for t0 := int64(0); t0 < c.n; t0 += cudakernel.Tile {
		n := int(min(cudakernel.Tile, c.n-t0))
		for l := range rows {
			rows[l] = rows[l][:0]
		}
		for r := range n {
			x := make([]float32, c.w)
			sampler.Fill(x, t0+int64(r), 1)
			for l := range c.d {
				x = tf32Forward(m, x, w[l*c.w*c.w:(l+1)*c.w*c.w], c.w)
				rows[l] = append(rows[l], x)
			}
		}
		for l := range c.d {
			for j := range c.w {
				var s, q float64
				for _, y := range rows[l] {
					s += float64(y[j])
					q += float64(y[j]) * float64(y[j])
				}
				add(l*c.w+j, s)
				if l == c.d-1 {
					add(c.d*c.w+j, q)
				}
			}
		}
	}
	return totals
}

// runTF32 runs the harness on shape s and returns the decoded totals of all chunks.
func runTF32(
	t *testing.T,
	s cudakernel.TF32Shape,
	m tcModel,
	n int64,
	key [2]uint32,
	weights string,
	chunk int64,
	grid int,
) []exact.Acc {
	t.Helper()
	if tf32Harness == "" {
		t.Skip("g++ not found: the host build of the CUDA sources is not checked")
	}
	lines, err := runBinary(tf32Harness, "",
		strconv.Itoa(s.W), strconv.Itoa(s.WP), strconv.Itoa(s.D), strconv.Itoa(s.TM),
		strconv.Itoa(s.WM), strconv.Itoa(s.WN), strconv.Itoa(s.KS), strconv.Itoa(s.Lanes()),
		strconv.FormatInt(n, 10), fmt.Sprintf("%x", key[0]), fmt.Sprintf("%x", key[1]), weights,
		strconv.FormatInt(chunk, 10), strconv.Itoa(grid),
		strconv.Itoa(m.kb), strconv.Itoa(m.guard), strconv.Itoa(b2i(m.rn)))
	if err != nil {
		t.Fatal(err)
	}
	return decodeChunks(t, lines, s.Values())
}

// writeWords writes PackTF32Weights' words for the harness.
func writeWords(t *testing.T, w []uint32) string {
	t.Helper()
	f := make([]float32, len(w))
	for i, v := range w {
		f[i] = math.Float32frombits(v)
	}
	return writeWeights(t, f)
}

// The kernel's device code, through the emulated tensor core, gives the scheme's exact
// totals for ragged N, widths off every tile, several warp layouts, tiles and slices,
// chunks and grids, under each summation model.
func TestHostTF32x3MatchesScheme(t *testing.T) {
	for _, c := range []bakeCase{{17, 2, 300, 11}, {64, 3, 200, 12}, {100, 2, 97, 13}} {
		key, w, _ := twin(t, c)
		planned, err := cudakernel.PlanTF32(c.w, c.d, h100Shared)
		if err != nil {
			t.Fatal(err)
		}
		shapes := []cudakernel.TF32Shape{planned}
		for _, alt := range [][4]int{{4, 2, 64, 8}, {8, 1, 128, 16}, {1, 8, 32, 8}} {
			s := cudakernel.TF32Shape{W: c.w, D: c.d, WM: alt[0], WN: alt[1], TM: alt[2], KS: alt[3]}
			s.WP = (c.w + 8*s.WN - 1) / (8 * s.WN) * 8 * s.WN
			if s.Validate(h100Shared) == nil && !slices.Contains(shapes, s) {
				shapes = append(shapes, s)
			}
		}
		// Every model on the planned shape; the other tilings, chunks and grids on one.
		for mi, m := range models {
			want := tf32Totals(t, m, c, key, w)
			for i, s := range shapes {
				scheds := [][2]int64{{c.n, 3}}
				switch {
				case i == 0 && mi == 1:
					scheds = append(scheds, [2]int64{c.n, 1}, [2]int64{96, 2}, [2]int64{32, 7})
				case i > 0 && mi != 1:
					continue
				}
				path := writeWords(t, cudakernel.PackTF32Weights(w, c.w, c.d, s.WP))
				for _, sc := range scheds {
					got := runTF32(t, s, m, c.n, key, path, sc[0], int(sc[1]))
					sameTotals(t, fmt.Sprintf("%v %v chunk %d grid %d", s, m, sc[0], sc[1]), got, want)
				}
			}
		}
	}
}

// The production width once, under one model: 128 accumulators a thread, 4×8 tiles a
// warp.
func TestHostTF32x3ProductionShape(t *testing.T) {
	c := bakeCase{256, 2, 100, 14}
	key, w, _ := twin(t, c)
	s, err := cudakernel.PlanTF32(c.w, c.d, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	m := models[1]
	got := runTF32(t, s, m, c.n, key, writeWords(t, cudakernel.PackTF32Weights(w, c.w, c.d, s.WP)), 64, 2)
	sameTotals(t, fmt.Sprintf("%v %v", s, m), got, tf32Totals(t, m, c, key, w))
}

// The split, by hand: exact parts, and the remainder's tie rounded away from zero.
func TestTF32Split(t *testing.T) {
	for _, c := range []struct{ x, big, small float32 }{
		{1, 1, 0},
		{1 + 3*0x1p-13, 1, 3 * 0x1p-13},
		{1 + 0x1p-10 + 0x1p-23, 1 + 0x1p-10, 0x1p-23},
		{1 + 0x1p-11 + 0x1p-22, 1, 0x1p-11 + 0x1p-21},        // tie: away from zero
		{-(1 + 0x1p-11 + 0x1p-22), -1, -(0x1p-11 + 0x1p-21)}, // on both sides
		{1 + 0x1p-11 + 0x1p-23, 1, 0x1p-11},                  // below the tie
	} {
		big, small := cudakernel.TF32Split(c.x)
		if big != math.Float32bits(c.big) || small != math.Float32bits(c.small) {
			t.Errorf("TF32Split(%g) = %#x %#x, want %g %g", c.x, big, small, c.big, c.small)
		}
		if b, s := split(c.x); b != c.big || s != c.small {
			t.Errorf("the test's split(%g) = %g %g, want %g %g", c.x, b, s, c.big, c.small)
		}
	}
}

// Tiles of the tensor core itself, dumped by internal/bench/tc_probe.cu on a GPU into
// testdata/tc/*.bin (1024 tiles of A[16][8], B[8][8] row k, C[16][8] and D = mma(A, B, C),
// float32 little-endian): one of the summation models (blocks of 4 or 8 products, 0 to 4
// guard bits, toward zero or to nearest) reproduces every element of every tile, and the
// log says which, for the tolerance's model (bakeapi.TF32x3MeanTolerance).
func TestTF32ModelFitsDeviceTiles(t *testing.T) {
	paths, _ := filepath.Glob("testdata/tc/*.bin")
	if len(paths) == 0 {
		t.Skip("no tile dump of a GPU in testdata/tc (the acceptance run writes tf32_tiles.bin)")
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		const per = 128 + 64 + 128 + 128
		if len(b) == 0 || len(b)%(4*per) != 0 {
			t.Fatalf("%s: %d bytes, not whole tiles of %d floats", path, len(b), per)
		}
		f := make([]float32, len(b)/4)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		var fits []string
		for _, kb := range []int{4, 8} {
			for guard := range 5 {
				for _, rn := range []bool{false, true} {
					if m := (tcModel{kb, guard, rn}); m.fits(f, per) {
						fits = append(fits, m.String())
					}
				}
			}
		}
		t.Logf("%s: %d tiles; models that reproduce every one: %v", path, len(f)/per, fits)
		if len(fits) == 0 {
			t.Errorf("%s: no model reproduces the tensor core's tiles: refit tcModel", path)
		}
	}
}

// fits reports whether m gives every D of the tiles in f.
func (m tcModel) fits(f []float32, per int) bool {
	for t0 := 0; t0 < len(f); t0 += per {
		a, b, c, d := f[t0:], f[t0+128:], f[t0+192:], f[t0+320:]
		for i := range 16 {
			for j := range 8 {
				var p [8]float64
				for k := range 8 {
					p[k] = float64(a[8*i+k]) * float64(b[8*k+j])
				}
				if math.Float32bits(m.dot(c[8*i+j], p)) != math.Float32bits(d[8*i+j]) {
					return false
				}
			}
		}
	}
	return true
}

// The production width's plan: 4×8 n8 tiles a warp, 128 accumulators a thread, 16-row
// slices in an H100's shared memory; every plan of every width is valid, and a width
// too wide for the tiles is refused with the way out.
func TestTF32Plans(t *testing.T) {
	s, err := cudakernel.PlanTF32(256, 8, h100Shared)
	want := cudakernel.TF32Shape{W: 256, D: 8, WP: 256, TM: 128, WM: 2, WN: 4, KS: 16}
	if err != nil || s != want || s.Accumulators() != 128 || s.Threads() != 256 {
		t.Errorf("PlanTF32(256, 8) = %+v, %v; want %+v", s, err, want)
	}
	for _, w := range []int{1, 8, 17, 64, 100, 256, 512} {
		plans, err := cudakernel.TF32Plans(w, 3, h100Shared)
		if err != nil {
			t.Fatalf("W=%d: %v", w, err)
		}
		for _, p := range plans {
			if err := p.Validate(h100Shared); err != nil || p.WP < w {
				t.Errorf("W=%d: plan %v: %v", w, p, err)
			}
		}
	}
	if _, err := cudakernel.PlanTF32(1000, 1, h100Shared); err == nil ||
		!strings.Contains(err.Error(), "fp32") {
		t.Errorf("W=1000: %v, want a refusal pointing to fp32", err)
	}
}
