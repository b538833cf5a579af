//go:build amd64 && !purego

package cpukernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/whestbake/whestbake/gpuengine/internal/simdcap"
)

// eachKernel runs f for every assembly kernel this CPU supports.
func eachKernel(t *testing.T, f func(t *testing.T, k simdKernel)) {
	if len(simdKernels) == 0 {
		t.Skip("no AVX2+FMA on this machine")
	}
	for _, k := range simdKernels {
		t.Run(k.name, func(t *testing.T) { f(t, k) })
	}
}

// The assembly against the generic code, bit for bit. Widths cover every
// column-block path (AVX2: 24, 16, 8, masked 1..7; AVX-512: 64 and masked
// 16-wide pieces) and their combinations; rows cover whole blocks, the padded
// tail and several row chunks.
func TestSIMDMatchesGeneric(t *testing.T) {
	small := []int{
		1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23,
		24, 25, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65,
	}
	type shape struct{ rows, width int }
	var shapes []shape
	for _, width := range small {
		for rows := 1; rows <= 13; rows++ {
			shapes = append(shapes, shape{rows, width})
		}
	}
	for _, width := range []int{100, 129, 256} {
		for _, rows := range []int{1, 4, 6, 13} {
			shapes = append(shapes, shape{rows, width})
		}
	}
	// several row chunks of the unpacked path
	shapes = append(shapes, shape{301, 17}, shape{2*chunkRows + 5, 64})
	want := map[string][]float32{}
	eachKernel(t, func(t *testing.T, k simdKernel) {
		for _, mode := range []Mode{FMA, MulAdd} {
			for kind := range inputKinds {
				for _, sh := range shapes {
					label := fmt.Sprintf(
						"%s/%s/%dx%d",
						mode,
						inputKinds[kind].name,
						sh.rows,
						sh.width,
					)
					src, w := randomProblem(kind, 2, sh.rows, sh.width)
					if want[label] == nil {
						want[label] = make([]float32, sh.rows*sh.width)
						forwardGeneric(want[label], src, sh.rows, sh.width, w, mode)
					}
					got := make([]float32, sh.rows*sh.width)
					k.forward(got, src, sh.rows, sh.width, w, mode)
					diffBits(t, label, got, want[label])
				}
			}
		}
	})
}

// A w larger than l2Budget takes the packed, panel-tiled path; 141 rows span
// two row chunks and a padded tail, 400 columns some full panels and a ragged one.
func TestSIMDPackedPathMatchesGeneric(t *testing.T) {
	const rows, width = 141, 400
	want := map[string][]float32{}
	eachKernel(t, func(t *testing.T, k simdKernel) {
		if width*width*4 <= l2Budget || rows/k.rows <= chunkRows/k.rows || width%k.panelCols == 0 ||
			rows%k.rows == 0 {
			t.Fatalf(
				"shape %dx%d no longer exercises the packed path; adjust the test",
				rows,
				width,
			)
		}
		for _, mode := range []Mode{FMA, MulAdd} {
			for _, kind := range []int{0, 4} {
				label := fmt.Sprintf("%s/%s", mode, inputKinds[kind].name)
				src, w := randomProblem(kind, 3, rows, width)
				if want[label] == nil {
					want[label] = make([]float32, rows*width)
					forwardGeneric(want[label], src, rows, width, w, mode)
				}
				got := make([]float32, rows*width)
				k.forward(got, src, rows, width, w, mode)
				diffBits(t, label, got, want[label])
			}
		}
	})
}

// Each lane of the assembly must be an exact fma_f32, judged by the math/big
// reference and not only by agreement with FMA32. With width 2L (L the register
// block width) lane l gets its own triple through a w that is zero except
// w[2l][l] = 1, w[2l+1][l] = b and the negated pair in column L+l, with src
// [.., c, a, ..] at 2l, 2l+1: column l computes fma(a, b, c) (every other step
// adds an exact ±0) and column L+l its negation, so relu shows both signs.
// Inputs stay finite so that the zero weights cannot make NaNs (Inf·0); the
// non-finite cases are covered by TestSIMDMatchesGeneric.
func TestSIMDLanesAreExactFMA(t *testing.T) {
	triples := 240_000
	if testing.Short() {
		triples = 24_000
	}
	eachKernel(t, func(t *testing.T, k simdKernel) {
		lanes, rows := k.cols, k.rows
		width := 2 * lanes
		gen := tripleSource{rand.New(rand.NewPCG(11, 12))}
		ref := newExactFMA32()
		finite := func(v float32) bool { return !isInf32(v) && v == v }
		reluf := func(v float32) float32 {
			if v > 0 {
				return v
			}
			return 0
		}
		w := make([]float32, width*width)
		src := make([]float32, rows*width)
		dst := make([]float32, rows*width)
		exact := make([]float32, lanes)
		abc := make([][3]float32, lanes)
		n := 0
		for batch := 0; batch < triples/lanes; batch++ {
			clear(w)
			for l := 0; l < lanes; l++ {
				a, b, c := gen.next(n)
				for n++; !finite(a) || !finite(b) || !finite(c); n++ {
					a, b, c = gen.next(n)
				}
				w[2*l*width+l], w[(2*l+1)*width+l] = 1, b
				w[2*l*width+lanes+l], w[(2*l+1)*width+lanes+l] = -1, -b
				src[2*l], src[2*l+1] = c, a
				exact[l], abc[l] = ref.fma(a, b, c), [3]float32{a, b, c}
			}
			for r := 1; r < rows; r++ {
				copy(src[r*width:(r+1)*width], src[:width])
			}
			k.forward(dst, src, rows, width, w, FMA)
			for r := 0; r < rows; r++ {
				for l := 0; l < lanes; l++ {
					pos, neg := dst[r*width+l], dst[r*width+lanes+l]
					if math.Float32bits(pos) != math.Float32bits(reluf(exact[l])) ||
						math.Float32bits(neg) != math.Float32bits(reluf(-exact[l])) {
						t.Fatalf("lane %d row %d: fma%v gave relu pair (%g, %g), exact value %g",
							l, r, abc[l], pos, neg, exact[l])
					}
				}
			}
		}
	})
}

// BenchmarkSIMDKernels measures every assembly kernel this CPU runs, not only
// the active one.
func BenchmarkSIMDKernels(b *testing.B) {
	for _, k := range simdKernels {
		for _, sh := range benchShapes {
			for _, mode := range []Mode{FMA, MulAdd} {
				b.Run(
					fmt.Sprintf("%s/W=%d/rows=%d/%s", k.name, sh.width, sh.rows, mode),
					func(b *testing.B) {
						benchForward(b, k.forward, sh, mode)
					},
				)
			}
		}
	}
}

// WHESTBAKE_CPU_KERNEL caps the kernel choice at start-up: the test binary
// runs itself with each value and reports what it chose.
func TestKernelCeiling(t *testing.T) {
	if os.Getenv("CPUKERNEL_REPORT_IMPL") != "" {
		names := []string{}
		for _, k := range simdKernels {
			names = append(names, k.name)
		}
		fmt.Printf("impl=%s kernels=%s\n", Impl(), strings.Join(names, ","))
		return
	}
	avx2 := cpu.X86.HasAVX2 && cpu.X86.HasFMA
	avx512 := cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F
	pick := func(ok bool, yes, no string) string {
		if ok {
			return yes
		}
		return no
	}
	belowAVX512 := pick(avx2, "impl=avx2-fma kernels=avx2-fma", "impl=generic kernels=")
	best := pick(avx512, "impl=avx512f kernels=avx512f,avx2-fma", belowAVX512)
	for value, want := range map[string]string{
		"":        best,
		"avx512":  best,
		"avx2":    belowAVX512,
		"generic": "impl=generic kernels=",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelCeiling$")
		cmd.Env = append(os.Environ(), "CPUKERNEL_REPORT_IMPL=1", simdcap.Env+"="+value)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want+"\n") {
			t.Errorf("%s=%q: %v\n%s\nwant %q", simdcap.Env, value, err, out, want)
		}
	}
}
