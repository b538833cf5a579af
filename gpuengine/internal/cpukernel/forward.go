package cpukernel

import (
	"fmt"
	"unsafe"
)

// Forward computes dst = relu(src @ w) for rows rows of width width, with the
// rounding defined by mode in the package comment. src and dst are row-major
// rows×width, w is row-major width×width: w[i*width+j] feeds output j from input i.
// dst must not overlap src or w. Forward panics on inconsistent sizes, overlap or
// an unknown mode: those are programming errors of the caller.
func Forward(dst, src []float32, rows, width int, w []float32, mode Mode) {
	n := checkShape("Forward", rows, width)
	switch {
	case len(dst) < n:
		panic(fmt.Sprintf(
			"kernel.Forward: dst has %d elements, need rows*width = %d*%d = %d",
			len(dst),
			rows,
			width,
			n,
		))
	case len(src) < n:
		panic(fmt.Sprintf(
			"kernel.Forward: src has %d elements, need rows*width = %d*%d = %d",
			len(src),
			rows,
			width,
			n,
		))
	case len(w) < width*width:
		panic(fmt.Sprintf(
			"kernel.Forward: w has %d elements, need width*width = %d*%d = %d",
			len(w),
			width,
			width,
			width*width,
		))
	case mode != FMA && mode != MulAdd:
		panic(fmt.Sprintf(
			"kernel.Forward: unknown mode %d, use kernel.FMA or kernel.MulAdd",
			uint8(mode),
		))
	}
	if n == 0 {
		return
	}
	dst, src, w = dst[:n], src[:n], w[:width*width]
	if overlaps(dst, src) {
		panic("kernel.Forward: dst overlaps src; " +
			"give the layer output its own buffer (ping-pong two buffers)")
	}
	if overlaps(dst, w) {
		panic("kernel.Forward: dst overlaps w; " +
			"the weights must not be overwritten while they are read")
	}
	if useSIMD {
		forwardSIMD(dst, src, rows, width, w, mode)
		return
	}
	forwardGeneric(dst, src, rows, width, w, mode)
}

// AddColumnSums adds each row of the rows×width matrix x into sums:
// sums[j] += float64(x[r*width+j]) for r ascending, each add rounded in float64.
func AddColumnSums(sums []float64, x []float32, rows, width int) {
	checkColumns("AddColumnSums", sums, x, rows, width)
	from := 0
	if useSIMD {
		from = addColumnSumsSIMD(sums, x, rows, width)
	}
	addColumnSumsGeneric(sums, x, rows, width, from)
}

// AddColumnSquares adds the squares of each row of x into sums:
// sums[j] += float64(x)*float64(x) for r ascending; the product is exact, the add
// rounds in float64.
func AddColumnSquares(sums []float64, x []float32, rows, width int) {
	checkColumns("AddColumnSquares", sums, x, rows, width)
	from := 0
	if useSIMD {
		from = addColumnSquaresSIMD(sums, x, rows, width)
	}
	addColumnSquaresGeneric(sums, x, rows, width, from)
}

// HasSIMD reports whether the vector implementation is active.
func HasSIMD() bool { return useSIMD }

// Impl names the active implementation for logs and metadata.
func Impl() string {
	if useSIMD {
		return simdName
	}
	return "generic"
}

func checkShape(fn string, rows, width int) int {
	if rows < 0 || width < 0 {
		panic(fmt.Sprintf("kernel.%s: rows=%d and width=%d must be non-negative", fn, rows, width))
	}
	if width != 0 && rows > int(^uint(0)>>1)/width {
		panic(fmt.Sprintf("kernel.%s: rows*width = %d*%d overflows int", fn, rows, width))
	}
	return rows * width
}

func checkColumns(fn string, sums []float64, x []float32, rows, width int) {
	n := checkShape(fn, rows, width)
	if len(sums) < width {
		panic(fmt.Sprintf("kernel.%s: sums has %d elements, need width = %d", fn, len(sums), width))
	}
	if len(x) < n {
		panic(fmt.Sprintf(
			"kernel.%s: x has %d elements, need rows*width = %d*%d = %d",
			fn,
			len(x),
			rows,
			width,
			n,
		))
	}
}

// overlaps reports whether two non-empty slices share memory.
func overlaps(a, b []float32) bool {
	const size = unsafe.Sizeof(float32(0))
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b))*size && b0 < a0+uintptr(len(a))*size
}
