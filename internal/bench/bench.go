// Package bench measures the engines side by side with peers that run
// whestbench's own bakes, create_dataset on numpy and create_dataset_torch on
// torch, and prints the tables docs/benchmarks.md records.
package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
)

// Config is one network shape to measure and the samples one measurement times.
type Config struct {
	Width, Depth int
	NSamples     int64
}

// shape is what makes rows comparable: the network, whatever the samples each timed.
type shape struct{ width, depth int }

func (c Config) shape() shape { return shape{c.Width, c.Depth} }

// ParseConfigs reads "256x8,64x4".
func ParseConfigs(s string, n int64) ([]Config, error) {
	var out []Config
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), "x")
		w, e1 := strconv.Atoi(a)
		d, e2 := strconv.Atoi(b)
		if !ok || e1 != nil || e2 != nil || w <= 0 || d <= 0 {
			return nil, fmt.Errorf("--configs: %q is not WIDTHxDEPTH (for example 256x8)", part)
		}
		out = append(out, Config{w, d, n})
	}
	return out, nil
}

// Result is one measured implementation on one configuration.
type Result struct {
	Impl   string
	Config Config // NSamples: the samples timed, over all MLPs the implementation ran
	Device string // gpuengine.DeviceCPU or gpuengine.DeviceCUDA
	// Peer is PeerNumpy or PeerTorch for a peer's row, "" for whestbake's engines.
	Peer    string
	Seconds float64
	// CPUSeconds is the process CPU time of the timed part where the
	// implementation reports it, as the peers do; the regression gate compares
	// CPU time because a shared machine's neighbours stretch wall time far
	// more than they stretch the work a single thread does.
	CPUSeconds float64
	// RanOn is what a peer ran, in its rows only: whestbench's version and
	// the BLAS its matrix products ran on, with the core it picked, e.g.
	// "whestbench 0.16.2, OpenBLAS 0.3.31.188.0, core SkylakeX
	// (threadpoolctl)". A ratio to the peer is as much the peer's core as
	// our code: the same OpenBLAS is several times slower per core where
	// it picks a slower core.
	RanOn string
	Err   error
}

// SamplesPerSecond is the throughput.
func (r Result) SamplesPerSecond() float64 { return float64(r.Config.NSamples) / r.Seconds }

// GFLOPS is the effective rate: the matmuls' 2·W²·D floating-point operations per
// sample, whatever an implementation does besides.
func (r Result) GFLOPS() float64 {
	c := r.Config
	return 2 * float64(c.Width) * float64(c.Width) * float64(c.Depth) * r.SamplesPerSecond() / 1e9
}

// Engine times one MLP of cfg on the CPU engine with the given spec fields.
func Engine(
	ctx context.Context,
	impl string,
	cfg Config,
	sampler bakeapi.Sampler,
	dot bakeapi.DotProduct,
	threads int,
) Result {
	return EngineOn(ctx, impl, gpuengine.CPU{}, cfg, sampler, dot, threads)
}

// EngineOn times one MLP of cfg on eng after a small untimed bake, which pays what
// an engine does once, such as a GPU's kernel compilation, outside the measurement.
func EngineOn(
	ctx context.Context,
	impl string,
	eng gpuengine.Engine,
	cfg Config,
	sampler bakeapi.Sampler,
	dot bakeapi.DotProduct,
	threads int,
) Result {
	res := Result{Impl: impl, Config: cfg, Device: eng.Describe().Device}
	spec := bakeapi.Spec{
		Width:    cfg.Width,
		Depth:    cfg.Depth,
		NSamples: cfg.NSamples,
		Sampler:  sampler,
		Dot:      dot,
	}
	job, err := gpuengine.JobForSeed(spec, 42)
	if err != nil {
		res.Err = err
		return res
	}
	job.Threads = threads
	warm := spec
	warm.NSamples = min(spec.NSamples, 1024)
	if _, res.Err = eng.BakeMLP(ctx, warm, job, nil, nil); res.Err != nil {
		return res
	}
	start := time.Now()
	_, res.Err = eng.BakeMLP(ctx, spec, job, nil, nil)
	res.Seconds = time.Since(start).Seconds()
	return res
}
