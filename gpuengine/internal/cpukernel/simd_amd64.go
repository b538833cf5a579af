//go:build amd64 && !purego

package cpukernel

import (
	"sync"

	"golang.org/x/sys/cpu"

	"github.com/whestbake/whestbake/gpuengine/internal/simdcap"
)

// All assembly needs AVX2 and FMA3; cpu reports them only when the OS also
// saves the YMM state. AVX-512F with OS ZMM support adds a wider forward
// kernel. WHESTBAKE_CPU_KERNEL, read by simdcap, can cap the choice for tests and
// benchmarks: avx2 leaves the AVX-512 kernel out, generic all assembly.
var (
	useSIMD     = cpu.X86.HasAVX2 && cpu.X86.HasFMA && simdcap.Allows(simdcap.AVX2)
	simdKernels = availableKernels()
	simdName    = kernelName()
)

// simdKernel is one assembly forward kernel; all produce identical bits.
type simdKernel struct {
	name string
	// rows × cols is the widest register block; panelCols, the width of a
	// packed panel, is a multiple of cols.
	rows, cols, panelCols int
	// fma and mulAdd compute columns [0, cols) of blocks*rows full rows; dst
	// and w point at the first column, width is the row stride of src and dst,
	// wstride the row stride of w.
	fma, mulAdd func(dst, src, w *float32, width, blocks, cols, wstride int)
}

var (
	avx2Kernel   = simdKernel{"avx2-fma", 4, 24, 96, forwardFMAAVX2, forwardMulAddAVX2}
	avx512Kernel = simdKernel{"avx512f", 6, 64, 128, forwardFMAAVX512, forwardMulAddAVX512}
)

// availableKernels lists the kernels this CPU runs under the ceiling,
// preferred first.
func availableKernels() []simdKernel {
	if !useSIMD {
		return nil
	}
	if cpu.X86.HasAVX512F && simdcap.Allows(simdcap.AVX512) {
		return []simdKernel{avx512Kernel, avx2Kernel}
	}
	return []simdKernel{avx2Kernel}
}

func kernelName() string {
	if len(simdKernels) == 0 {
		return ""
	}
	return simdKernels[0].name
}

// See forward_amd64.s and forward512_amd64.s.
//
//go:noescape
func forwardFMAAVX2(dst, src, w *float32, width, blocks, cols, wstride int)

//go:noescape
func forwardMulAddAVX2(dst, src, w *float32, width, blocks, cols, wstride int)

//go:noescape
func forwardFMAAVX512(dst, src, w *float32, width, blocks, cols, wstride int)

//go:noescape
func forwardMulAddAVX512(dst, src, w *float32, width, blocks, cols, wstride int)

// columnSumsAVX2 and columnSquaresAVX2 handle columns [0, cols), cols a multiple of 4.
//
//go:noescape
func columnSumsAVX2(sums *float64, x *float32, rows, width, cols int)

//go:noescape
func columnSquaresAVX2(sums *float64, x *float32, rows, width, cols int)

// Cache tiling. Each row block streams the w columns it computes, so w must
// stay in L2 across row blocks. While all of w fits the budget the kernel runs
// whole rows over w as it is. A larger w is packed into column panels, each
// panel's rows contiguous, which also avoids the cache-set conflicts of a
// power-of-two row stride, and each panel is swept over a chunk of rows, so one
// panel and the chunk's src rows share L2. Tiling only reorders independent
// outputs; every lane still walks i in order.
//
// Rows are always fed in chunks: assembly cannot be preempted, and a chunk
// bounds one call to well under a millisecond, so a large Forward does not hold
// up a garbage-collection stop.
const (
	l2Budget  = 512 << 10 // bytes of w read in place; larger w is packed
	chunkRows = 128       // rows per call, rounded down to whole register blocks
)

func forwardSIMD(dst, src []float32, rows, width int, w []float32, mode Mode) {
	simdKernels[0].forward(dst, src, rows, width, w, mode)
}

// forward runs the assembly on whole row blocks; a ragged tail of rows is run
// through the same code on a zero-padded copy, since rows are independent and
// the padding rows are simply discarded.
func (k simdKernel) forward(dst, src []float32, rows, width int, w []float32, mode Mode) {
	kern := k.fma
	if mode == MulAdd {
		kern = k.mulAdd
	}
	// panel returns the pw columns of w from j0 on and their row stride.
	panelCols := width
	panel := func(j0, pw int) ([]float32, int) { return w[j0:], width }
	if width*width*4 > l2Budget {
		packed := packPool.get(width * width)
		defer packPool.put(packed)
		k.packPanels(*packed, w, width)
		panelCols = k.panelCols
		panel = func(j0, pw int) ([]float32, int) { return (*packed)[j0*width:], pw }
	}
	// run computes nb row blocks of dst from src, starting at element row0.
	run := func(dst, src []float32, row0, nb int) {
		for j0 := 0; j0 < width; j0 += panelCols {
			pw := min(panelCols, width-j0)
			p, stride := panel(j0, pw)
			kern(&dst[row0+j0], &src[row0], &p[0], width, nb, pw, stride)
		}
	}
	blocks, chunk := rows/k.rows, max(chunkRows/k.rows, 1)
	for b0 := 0; b0 < blocks; b0 += chunk {
		run(dst, src, b0*k.rows*width, min(chunk, blocks-b0))
	}
	tail := rows - blocks*k.rows
	if tail == 0 {
		return
	}
	done := blocks * k.rows * width
	pad := padPool.get(2 * k.rows * width)
	defer padPool.put(pad)
	in, out := (*pad)[:k.rows*width], (*pad)[k.rows*width:]
	// The rows past the tail are zeroed rather than left as whatever the
	// buffer held before: their outputs are discarded, but stale values
	// could be subnormal, which some cores compute slowly.
	clear(in[copy(in, src[done:]):])
	run(out, in, 0, 1)
	copy(dst[done:], out[:tail*width])
}

// packPanels lays w out panel by panel: the panel of columns [j0, j0+pw) sits at
// packed[j0*width:], row i of it at offset i*pw.
func (k simdKernel) packPanels(packed, w []float32, width int) {
	for j0 := 0; j0 < width; j0 += k.panelCols {
		pw := min(k.panelCols, width-j0)
		p := packed[j0*width:]
		for i := 0; i < width; i++ {
			copy(p[i*pw:(i+1)*pw], w[i*width+j0:])
		}
	}
}

// floatPool recycles float32 scratch buffers of a size that depends on the
// call, a packed w or a padded tail, so that a Forward in a hot loop does not
// allocate.
type floatPool struct{ sync.Pool }

// packPool holds packed panels of w, padPool the padded copies of a ragged
// tail of rows and their outputs.
var packPool, padPool floatPool

// get returns a buffer of n elements with stale contents.
func (p *floatPool) get(n int) *[]float32 {
	if b, ok := p.Get().(*[]float32); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]float32, n)
	return &b
}

func (p *floatPool) put(b *[]float32) { p.Put(b) }

func addColumnSumsSIMD(sums []float64, x []float32, rows, width int) int {
	cols := width &^ 3
	if rows > 0 && cols > 0 {
		columnSumsAVX2(&sums[0], &x[0], rows, width, cols)
	}
	return cols
}

func addColumnSquaresSIMD(sums []float64, x []float32, rows, width int) int {
	cols := width &^ 3
	if rows > 0 && cols > 0 {
		columnSquaresAVX2(&sums[0], &x[0], rows, width, cols)
	}
	return cols
}
