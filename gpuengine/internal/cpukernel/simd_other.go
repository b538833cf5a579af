//go:build !amd64 || purego

package cpukernel

// Without the amd64 assembly, on another GOARCH or with the purego tag, only the generic
// code exists; these stubs are never reached because useSIMD is false.
const (
	useSIMD  = false
	simdName = ""
)

func forwardSIMD(dst, src []float32, rows, width int, w []float32, mode Mode) {
	panic("kernel: no SIMD implementation in this build")
}

func addColumnSumsSIMD(sums []float64, x []float32, rows, width int) int    { return 0 }
func addColumnSquaresSIMD(sums []float64, x []float32, rows, width int) int { return 0 }
