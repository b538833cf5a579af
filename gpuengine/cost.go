package gpuengine

import (
	"math"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
)

// Rates are what the CPU/GPU choice of device "auto" compares.
type Rates struct {
	// CPUFLOPSPerThread is the effective FLOP/s, 2·W²·D per sample, of one
	// CPU thread of the philox twin.
	CPUFLOPSPerThread float64
	GPUFLOPS          float64       // effective FLOP/s of the GPU at W ≥ 256
	GPUStartup        time.Duration // once per process: context, NVRTC compile, module load
}

// DefaultRates decide --device auto. They were measured, not estimated: the GPU
// figures by `whestbake calibrate --device cuda` on the fused path at 256×8 on an H100
// 80GB HBM3 on 2026-11-26: 4.14e13 FLOP/s, and 141 ms from opening the engine to the end
// of a 4096-sample warm-up, context and NVRTC compile included, as docs/benchmarks.md
// records. The CPU figure is the AVX2 twin's 60 GFLOP/s per thread at 256×8, which the
// same machine's 16-thread Xeon matched with 0.95 TFLOP/s in all.
var DefaultRates = Rates{
	CPUFLOPSPerThread: 60e9,
	GPUFLOPS:          41.4e12,
	GPUStartup:        141 * time.Millisecond,
}

// gpuRate is the GPU's effective rate at width w. Narrow layers leave most FMA units
// idle while the per-sample input generation stays, so the rate is taken to fall
// linearly below 256. That is conservative: the same H100 ran 64×4 at 23.4 TFLOP/s,
// above the 10.4 the line gives.
func (r Rates) gpuRate(w int) float64 {
	return r.GPUFLOPS * math.Min(1, float64(w)/256)
}

// Crossover is the bake size, MLPs × samples, above which the GPU finishes first for a
// W×D network against `threads` CPU threads; +Inf when the GPU never does.
func (r Rates) Crossover(w, d, threads int) float64 {
	perSample := 2 * float64(w) * float64(w) * float64(d)
	saved := perSample/(r.CPUFLOPSPerThread*float64(max(1, threads))) - perSample/r.gpuRate(w)
	if saved <= 0 {
		return math.Inf(1)
	}
	return r.GPUStartup.Seconds() / saved
}

// PreferGPU reports whether device "auto" should run a bake of nMLPs × nSamples on the GPU.
func (r Rates) PreferGPU(w, d int, nMLPs, nSamples int64, threads int) bool {
	return float64(nMLPs)*float64(nSamples) > r.Crossover(w, d, threads)
}

// HostBytes bounds the host memory the CPU engines allocate for one MLP of
// spec on threads threads, beyond the job's weights: the numpy sampler's
// chunk buffers, or each philox worker's block buffers and exact sums, where an
// exact accumulator is a few machine words per neuron. The CUDA engine's
// host side is smaller than either.
func HostBytes(spec bakeapi.Spec, threads int) int64 {
	w, d := int64(spec.Width), int64(spec.Depth)
	if spec.Sampler == bakeapi.SamplerNumpy {
		return 2*int64(NumpyChunk(spec.Width))*w*4 + (d*w+w)*8
	}
	const exactAccBytes = 64
	rows := int64(PhiloxBlockRows)
	perWorker := 2*rows*w*4 + philoxBlockTiles*w*8 + (d*w+w)*exactAccBytes
	return int64(max(1, threads))*perWorker + (d*w+w)*exactAccBytes
}
