package suite

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/cputime"
	"github.com/whestbake/whestbake/internal/seeds"
)

// ProbeReport is what one engine probe measured, printed as one JSON line by
// `benchgate probe` so the probe can run in a child built from another commit.
type ProbeReport struct {
	Samples    int64   `json:"samples"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Seconds    float64 `json:"seconds"`
	// AllocsPerSample and BytesPerSample are marginal: the difference between
	// the timed bake and the small warm-up bake, per extra sample, so the fixed
	// cost of a bake, buffers and weights, cancels and only the hot loop is left.
	AllocsPerSample float64 `json:"allocs_per_sample"`
	BytesPerSample  float64 `json:"bytes_per_sample"`
}

// warmSamples is the warm-up bake's size: one philox chunk, so the warm-up
// pays once-only costs and the marginal counts see every further chunk.
const warmSamples = 1024

// ProbeOptions say how a probe runs its engine.
type ProbeOptions struct {
	Threads int
	// SlowDown, when positive, burns that fraction of the timed bake's CPU
	// time again before the clock stops, allocating nothing: a slowed build
	// on demand, for Options.SlowDown.
	SlowDown float64
}

// Probe bakes one MLP of spec on the CPU engine twice, a warm-up of
// warmSamples and the timed bake of spec.NSamples, with a progress callback
// that does nothing, since a bake always passes one and the engine builds
// each step's checkpoint for it.
func Probe(ctx context.Context, spec bakeapi.Spec, po ProbeOptions) (ProbeReport, error) {
	if spec.NSamples <= warmSamples {
		return ProbeReport{}, fmt.Errorf("probe: --n-samples %d must exceed the warm-up's %d",
			spec.NSamples, warmSamples)
	}
	st := seeds.DeriveV3(42)
	w, err := seeds.Weights(spec.Width, spec.Depth, st.Weight)
	if err != nil {
		return ProbeReport{}, err
	}
	job := gpuengine.Job{Weights: w, Sample: st.Sample, Threads: po.Threads}
	eng := gpuengine.CPU{}
	bake := func(n int64) (mallocs, bytes uint64, err error) {
		s := spec
		s.NSamples = n
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = eng.BakeMLP(ctx, s, job, nil, func(gpuengine.Checkpoint) {})
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc, err
	}
	warmAllocs, warmBytes, err := bake(warmSamples)
	if err != nil {
		return ProbeReport{}, err
	}
	cpu0 := cpuTime()
	start := time.Now()
	allocs, bytes, err := bake(spec.NSamples)
	if err != nil {
		return ProbeReport{}, err
	}
	if po.SlowDown > 0 {
		burn(cpu0 + (1+po.SlowDown)*(cpuTime()-cpu0))
	}
	wall := time.Since(start).Seconds()
	cpu := cpuTime() - cpu0
	extra := float64(spec.NSamples - warmSamples)
	return ProbeReport{
		Samples:         spec.NSamples,
		CPUSeconds:      cpu,
		Seconds:         wall,
		AllocsPerSample: (float64(allocs) - float64(warmAllocs)) / extra,
		BytesPerSample:  (float64(bytes) - float64(warmBytes)) / extra,
	}, nil
}

// burn spins until the process has used until seconds of CPU time.
func burn(until float64) {
	for cpuTime() < until {
	}
}

// cpuTime is the user and system time this process has used, all threads,
// in seconds. Where it cannot be read the 0 makes the parent reject the
// report, as it requires a positive CPU time.
func cpuTime() float64 { return cputime.Process().Seconds() }
