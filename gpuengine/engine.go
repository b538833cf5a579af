// Package gpuengine defines the engine interface every bake runs through and the
// CPU engines behind it: the `numpy` sampler, whestbench's CPU backend bit for
// bit where numpy's BLAS sums alike as docs/NUMPY.md shows, and the `philox`
// sampler's CPU twin, bit-identical to the CUDA engine.
// The default build has no cgo; the CUDA engine lives behind the `cuda` tag.
package gpuengine

import (
	"context"
	"io"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/seeds"
)

// PhiloxTile is the number of consecutive samples whose float64 column sums are
// formed sequentially before entering the exact accumulator.
const PhiloxTile = 32

// Job is one MLP: its weights, layer-major then row-major at index l·W² + i·W + j, and
// the sample stream's SeedSequence, ss[1] of the seed protocol.
type Job struct {
	Weights []float32
	Sample  seeds.SeedSequence
	// Threads is how many CPU threads compute the MLP; 0 means 1. It never
	// changes a bit of the result; the CUDA engine ignores it.
	Threads int
}

// Result holds one MLP's statistics as whestbench stores them.
type Result struct {
	LayerMeans  []float32 // depth·width
	AvgVariance float64
}

// FinalMeans is the last layer's row of LayerMeans.
func (r Result) FinalMeans(width int) []float32 {
	return r.LayerMeans[len(r.LayerMeans)-width:]
}

// Checkpoint is an MLP's exact progress: resuming from it yields the same bits as
// never stopping. Sums are float64 for numpy, whose contract is their order, and
// exact fixed-point integers for philox.
type Checkpoint struct {
	Algorithm   string            `json:"algorithm"`
	SamplesDone int64             `json:"samples_done"`
	LayerSums   []float64         `json:"layer_sums,omitempty"`
	SumSquares  []float64         `json:"sum_squares,omitempty"`
	PCG64       *seeds.PCG64State `json:"pcg64,omitempty"`
	LayerExact  []string          `json:"layer_exact,omitempty"`
	SquareExact []string          `json:"square_exact,omitempty"`
	// Kernel is a tf32x3 bake's bakeapi.TensorCores as its String: its sums hold only
	// under the same GPU architecture, driver, NVRTC and kernel, so a resume under
	// another is refused.
	Kernel string `json:"kernel,omitempty"`
}

// Progress receives a checkpoint after every step; it must not retain the slices.
type Progress func(Checkpoint)

// Description is what an engine records in metadata.
type Description struct {
	Engine     string // e.g. "cpu"
	Device     string // "cpu" or "cuda"
	DeviceName string
	Kernel     string // implementation of the inner loop, e.g. "avx2-fma"
	// Driver is the GPU driver's CUDA version, "" on the CPU.
	Driver string
	// MemoryBytes is the device's memory, the GPU's or the host's for the
	// CPU engine, for monitoring; 0 when unknown. Not part of metadata.
	MemoryBytes int64
}

// Engine bakes one MLP at a time. BakeMLP resumes from resume when it is not nil
// and reports progress; on cancellation it returns ctx.Err() after the last
// reported checkpoint, which is a valid resume point.
type Engine interface {
	BakeMLP(
		ctx context.Context,
		spec bakeapi.Spec,
		job Job,
		resume *Checkpoint,
		progress Progress,
	) (Result, error)
	Describe() Description
}

// DescribeFor is what eng records in the metadata of a bake of spec: Describe, except
// that a tf32x3 bake's Kernel is its bakeapi.TensorCores, which the CUDA engine knows
// only once it has built the kernel for spec's shape; it builds it here, as the bake's
// first MLP would.
func DescribeFor(eng Engine, spec bakeapi.Spec) (Description, error) {
	if d, ok := eng.(interface {
		describeFor(spec bakeapi.Spec) (Description, error)
	}); ok {
		return d.describeFor(spec)
	}
	return eng.Describe(), nil
}

// Close releases what eng holds beyond the process's memory: the CUDA engine's
// modules, device buffers, cuBLAS handles and, with the last engine, the GPU's
// context. Engines that hold nothing need no closing.
func Close(eng Engine) error {
	if c, ok := eng.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
