// Package gpuengine defines the engine interface every bake runs through and the
// CPU engines behind it: the `numpy` sampler (whestbench's CPU backend, bit for
// bit) and the `philox` sampler's CPU twin (bit-identical to the CUDA engine).
// The default build has no cgo; the CUDA engine lives behind the `cuda` tag.
package gpuengine

import (
	"context"
	"fmt"

	"github.com/whestbake/whestbake/seeds"
)

// Sampler names the input distribution's generator and the summation contract.
type Sampler string

const (
	SamplerNumpy  Sampler = "numpy"
	SamplerPhilox Sampler = "philox"
)

// DotProduct is the float32 dot-product rounding of the numpy sampler: the
// reference fixtures were baked with a fused multiply-add per term; Debian's
// numpy on x86-64 rounds the product and the sum separately.
type DotProduct string

const (
	DotFMA    DotProduct = "fma"
	DotMulAdd DotProduct = "muladd"
)

// Algorithm versions recorded in metadata; a change of any output bit needs a new one.
const (
	NumpyAlgorithm  = "numpy-pcg64-chunked/1"
	PhiloxAlgorithm = "philox4x32-10-boxmuller-tile32-fix64/1"
)

// PhiloxTile is the number of consecutive samples whose float64 column sums are
// formed sequentially before entering the exact accumulator.
const PhiloxTile = 32

// Spec is the shape of one MLP's bake; identical for every MLP of a dataset.
type Spec struct {
	Width, Depth int
	NSamples     int64
	Sampler      Sampler
	Dot          DotProduct // numpy sampler only
	ChunkSize    int        // philox: samples per step (rounded up to whole tiles); 0 = default. numpy: must be 0
	Threads      int        // worker goroutines for this MLP; 0 = 1
}

// Validate reports the first unusable field of s.
func (s Spec) Validate() error {
	switch {
	case s.Width <= 0:
		return fmt.Errorf("width must be positive, got %d", s.Width)
	case s.Depth <= 0:
		return fmt.Errorf("depth must be positive, got %d", s.Depth)
	case s.NSamples <= 0:
		return fmt.Errorf("n_samples must be positive, got %d", s.NSamples)
	case s.ChunkSize < 0:
		return fmt.Errorf("chunk_size must be positive (or 0 for the default), got %d", s.ChunkSize)
	case s.Threads < 0:
		return fmt.Errorf("threads must be positive (or 0 for one), got %d", s.Threads)
	}
	switch s.Sampler {
	case SamplerNumpy:
		if s.Dot != DotFMA && s.Dot != DotMulAdd {
			return fmt.Errorf("dot product %q unknown: use %q (whestbench fixtures) or %q (Debian numpy on x86-64)", s.Dot, DotFMA, DotMulAdd)
		}
		if s.ChunkSize != 0 {
			return fmt.Errorf("chunk size %d: the numpy sampler always uses whestbench's chunk rule (it sets the summation order); omit --chunk-size", s.ChunkSize)
		}
	case SamplerPhilox:
	default:
		return fmt.Errorf("sampler %q unknown: use %q or %q", s.Sampler, SamplerPhilox, SamplerNumpy)
	}
	return nil
}

// Algorithm returns the algorithm version of s's sampler.
func (s Spec) Algorithm() string {
	if s.Sampler == SamplerNumpy {
		return NumpyAlgorithm
	}
	return PhiloxAlgorithm
}

// Job is one MLP: its weights (layer-major, row-major, index l·W² + i·W + j) and the
// sample stream's SeedSequence (ss[1] of the seed protocol).
type Job struct {
	Weights []float32
	Sample  seeds.SeedSequence
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
// never stopping. Sums are float64 for numpy (their order is the contract) and
// exact fixed-point integers for philox.
type Checkpoint struct {
	Algorithm   string            `json:"algorithm"`
	SamplesDone int64             `json:"samples_done"`
	LayerSums   []float64         `json:"layer_sums,omitempty"`
	SumSquares  []float64         `json:"sum_squares,omitempty"`
	PCG64       *seeds.PCG64State `json:"pcg64,omitempty"`
	LayerExact  []string          `json:"layer_exact,omitempty"`
	SquareExact []string          `json:"square_exact,omitempty"`
}

// Progress receives a checkpoint after every step; it must not retain the slices.
type Progress func(Checkpoint)

// Description is what an engine records in metadata.
type Description struct {
	Engine     string // e.g. "cpu"
	Device     string // "cpu" or "cuda"
	DeviceName string
	Kernel     string // implementation of the inner loop, e.g. "avx2-fma"
}

// Engine bakes one MLP at a time. BakeMLP resumes from resume when it is not nil
// and reports progress; on cancellation it returns ctx.Err() after the last
// reported checkpoint, which is a valid resume point.
type Engine interface {
	BakeMLP(ctx context.Context, spec Spec, job Job, resume *Checkpoint, progress Progress) (Result, error)
	Describe() Description
}
