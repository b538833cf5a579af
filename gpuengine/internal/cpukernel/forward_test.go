package cpukernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveForward is the contract written as directly as possible: one accumulator
// per output, i ascending, no loop interchange.
func naiveForward(src, w []float32, rows, width int, mode Mode) []float32 {
	out := make([]float32, rows*width)
	for r := 0; r < rows; r++ {
		for j := 0; j < width; j++ {
			var acc float32
			for i := 0; i < width; i++ {
				x, y := src[r*width+i], w[i*width+j]
				if mode == FMA {
					acc = FMA32(x, y, acc)
				} else {
					acc = float32(acc + float32(x*y))
				}
			}
			if acc > 0 {
				out[r*width+j] = acc
			}
		}
	}
	return out
}

var specialValues = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, 0x1p-24, 3 * 0x1p-25, 1 + 0x1p-23, 1 - 0x1p-24,
	0x1p-126, 0x1p-149, -0x1p-149, 5 * 0x1p-149, 0x1p100, -0x1p100, math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0.1, -1.0 / 3, 1e-30,
}

// inputKinds produce src and w values that stress different parts of the contract.
var inputKinds = []struct {
	name string
	gen  func(rng *rand.Rand, n int, scale float64) []float32
}{
	{"normal", normals},
	{"sparse", func(rng *rand.Rand, n int, scale float64) []float32 {
		// relu outputs: half exact zeros (some -0), the rest positive
		x := normals(rng, n, scale)
		for i := range x {
			switch rng.IntN(4) {
			case 0:
				x[i] = 0
			case 1:
				x[i] = float32(math.Copysign(0, -1))
			default:
				x[i] = float32(math.Abs(float64(x[i])))
			}
		}
		return x
	}},
	{"subnormal", func(rng *rand.Rand, n int, scale float64) []float32 {
		// products near 2^-134: sums live in the subnormal range, so any
		// flush-to-zero would show
		return normals(rng, n, scale*0x1p-67)
	}},
	{"huge", func(rng *rand.Rand, n int, scale float64) []float32 {
		// products near 2^120: sums overflow to ±Inf and Inf-Inf gives NaN
		return normals(rng, n, scale*0x1p60)
	}},
	{"special", func(rng *rand.Rand, n int, _ float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = specialValues[rng.IntN(len(specialValues))]
		}
		return x
	}},
	{"ties", func(rng *rand.Rand, n int, _ float64) []float32 {
		// ±(1 + k/4096)·2^e: exact products with bits down to 2^-24 relative,
		// so partial sums hit float32 midpoints
		x := make([]float32, n)
		for i := range x {
			v := math.Ldexp(1+float64(rng.IntN(4096))/4096, -rng.IntN(14))
			if rng.IntN(2) == 0 {
				v = -v
			}
			x[i] = float32(v)
		}
		return x
	}},
}

func diffBits(t *testing.T, label string, got, want []float32) {
	t.Helper()
	for k := range want {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
			t.Fatalf("%s: element %d = %g (%#08x), want %g (%#08x)", label, k,
				got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
		}
	}
}

func randomProblem(kind int, seed uint64, rows, width int) (src, w []float32) {
	rng := rand.New(rand.NewPCG(seed, uint64(rows*1000+width)))
	gen := inputKinds[kind].gen
	return gen(rng, rows*width, 1), gen(rng, width*width, math.Sqrt(2/float64(width)))
}

func TestGenericMatchesNaive(t *testing.T) {
	for _, mode := range []Mode{FMA, MulAdd} {
		for kind := range inputKinds {
			for _, sh := range [][2]int{{1, 1}, {3, 7}, {5, 33}, {2, 100}} {
				rows, width := sh[0], sh[1]
				src, w := randomProblem(kind, 1, rows, width)
				got := make([]float32, rows*width)
				forwardGeneric(got, src, rows, width, w, mode)
				diffBits(t, fmt.Sprintf("%s/%s/%dx%d", mode, inputKinds[kind].name, rows, width),
					got, naiveForward(src, w, rows, width, mode))
			}
		}
	}
}

func TestForwardNumpyMulAdd(t *testing.T) {
	vec := loadNumpyVectors(t)
	for _, c := range vec.MulAdd {
		x, w, want := c.f32(t, c.X), c.f32(t, c.W), c.f32(t, c.Want)
		got := make([]float32, c.Rows*c.Width)
		Forward(got, x, c.Rows, c.Width, w, MulAdd)
		diffBits(t, fmt.Sprintf("numpy %s %dx%d (%s)", c.Kind, c.Rows, c.Width, Impl()), got, want)
		forwardGeneric(got, x, c.Rows, c.Width, w, MulAdd)
		diffBits(t, fmt.Sprintf("numpy %s %dx%d (generic)", c.Kind, c.Rows, c.Width), got, want)
	}
}

func TestForwardLeavesRestOfDstAlone(t *testing.T) {
	const rows, width = 7, 13
	src, w := randomProblem(0, 4, rows, width)
	dst := make([]float32, rows*width+5)
	for i := range dst {
		dst[i] = -42
	}
	Forward(dst, src, rows, width, w, FMA)
	for i := rows * width; i < len(dst); i++ {
		if dst[i] != -42 {
			t.Fatalf(
				"dst[%d] = %g was written; only the first rows*width elements belong to the output",
				i,
				dst[i],
			)
		}
	}
	for i := 0; i < rows*width; i++ {
		if dst[i] < 0 || math.Signbit(float64(dst[i])) {
			t.Fatalf("dst[%d] = %g: relu outputs must be +0 or positive", i, dst[i])
		}
	}
}

// Forward runs in the engines' hot loops, a call per layer per block of
// rows: once warm it allocates nothing, not for a ragged tail of rows (which
// the assembly runs on a padded copy) nor for a w packed into panels.
func TestForwardAllocatesNothing(t *testing.T) {
	for _, sh := range []struct{ rows, width int }{{7, 64}, {13, 256}, {7, 400}} {
		src, w := randomProblem(0, 5, sh.rows, sh.width)
		dst := make([]float32, sh.rows*sh.width)
		allocs := testing.AllocsPerRun(20, func() { Forward(dst, src, sh.rows, sh.width, w, FMA) })
		if allocs != 0 {
			t.Errorf(
				"Forward of %d rows × W=%d (%s): %v allocations a call, want 0",
				sh.rows,
				sh.width,
				Impl(),
				allocs,
			)
		}
	}
}

func TestForwardRejectsBadArguments(t *testing.T) {
	buf := make([]float32, 64)
	cases := []struct {
		name, want string
		call       func()
	}{
		{
			"short dst",
			"dst has 3 elements",
			func() { Forward(buf[:3], buf[8:], 2, 2, buf[16:], FMA) },
		},
		{
			"short src",
			"src has 3 elements",
			func() { Forward(buf[:4], buf[8:11], 2, 2, buf[16:], FMA) },
		},
		{
			"short w",
			"w has 3 elements",
			func() { Forward(buf[:4], buf[8:], 2, 2, buf[16:19], FMA) },
		},
		{"negative", "must be non-negative", func() { Forward(buf, buf, -1, 2, buf, FMA) }},
		{"mode", "unknown mode 7", func() { Forward(buf[:4], buf[8:], 2, 2, buf[16:], Mode(7)) }},
		{
			"dst overlaps src",
			"dst overlaps src",
			func() { Forward(buf[:4], buf[2:], 2, 2, buf[16:], FMA) },
		},
		{
			"dst overlaps w",
			"dst overlaps w",
			func() { Forward(buf[16:], buf[:4], 2, 2, buf[18:], FMA) },
		},
		{
			"short sums",
			"sums has 1 elements",
			func() { AddColumnSums(make([]float64, 1), buf, 2, 2) },
		},
		{
			"short x",
			"x has 3 elements",
			func() { AddColumnSquares(make([]float64, 2), buf[:3], 2, 2) },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				msg := fmt.Sprint(recover())
				if !strings.Contains(msg, c.want) {
					t.Fatalf("panic %q, want one mentioning %q", msg, c.want)
				}
			}()
			c.call()
		})
	}
	// Empty problems are no-ops, whatever the buffers.
	Forward(nil, nil, 0, 5, make([]float32, 25), FMA)
	Forward(nil, nil, 3, 0, nil, MulAdd)
}

func TestImplAndMode(t *testing.T) {
	if HasSIMD() != (Impl() == simdName) || (!HasSIMD() && Impl() != "generic") {
		t.Fatalf("HasSIMD()=%v but Impl()=%q", HasSIMD(), Impl())
	}
	if FMA.String() != "fma" || MulAdd.String() != "muladd" || Mode(9).String() != "Mode(9)" {
		t.Fatalf("mode names: %q %q %q", FMA, MulAdd, Mode(9))
	}
}
