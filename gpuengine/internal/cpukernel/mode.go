package cpukernel

import "fmt"

// Mode selects how one step of the dot product is rounded.
type Mode uint8

const (
	// FMA rounds once per step: acc = fma_f32(x, w, acc). This matches the
	// whestbench fixtures, a sequential float32 FMA dot product.
	FMA Mode = iota
	// MulAdd rounds the product and then the sum: acc = acc + float32(x*w).
	MulAdd
)

// String names the mode as it is recorded in metadata.
func (m Mode) String() string {
	switch m {
	case FMA:
		return "fma"
	case MulAdd:
		return "muladd"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}
