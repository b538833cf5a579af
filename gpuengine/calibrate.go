package gpuengine

import (
	"context"
	"math"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
)

// CalibrateInput is a philox bake for `whestbake calibrate` to project, and how
// long to measure it for.
type CalibrateInput struct {
	Width    int
	Depth    int
	NMLPs    int64
	NSamples int64
	Threads  int
	// Target is the wall time of the calibration run.
	Target time.Duration
	// Opened is when the engine was opened: the warm-up counts from then.
	Opened time.Time
}

// Calibration is what Calibrate measured: the warm-up, and the calibration
// run with its rates.
type Calibration struct {
	WarmSamples int64         // of the warm-up's one MLP
	Warm        time.Duration // from opening the engine to the end of the warm-up
	MLPs        int
	Samples     int64 // per MLP of the calibration run
	Took        time.Duration
	Rate        float64 // samples per second
	FLOPRate    float64 // FLOP per second
}

// Calibrate warms eng up, so that what a process pays once, a GPU's context and
// NVRTC compilation, is paid. It then probes its rate until a run is long enough
// to time, and times a calibration run of a few MLPs sized from the probe
// to last about in.Target, as whestbench's calibration recipe does.
func Calibrate(ctx context.Context, eng Engine, in CalibrateInput) (Calibration, error) {
	m := Calibration{WarmSamples: min(in.NSamples, 4096)}
	if _, err := in.time(ctx, eng, 1, m.WarmSamples); err != nil {
		return m, err
	}
	m.Warm = time.Since(in.Opened)
	probeN := min(in.NSamples, 1<<14)
	probe, err := in.time(ctx, eng, 1, probeN)
	for err == nil && probe < in.Target/20 && probeN < in.NSamples {
		probeN = min(in.NSamples, probeN*4)
		probe, err = in.time(ctx, eng, 1, probeN)
	}
	if err != nil {
		return m, err
	}
	m.MLPs = int(min(in.NMLPs, 3))
	m.Samples = calibrationSamples(probeN, probe, in.Target, m.MLPs, in.NSamples)
	if m.Took, err = in.time(ctx, eng, m.MLPs, m.Samples); err != nil {
		return m, err
	}
	perSample := 2 * float64(in.Width) * float64(in.Width) * float64(in.Depth)
	m.Rate = float64(m.MLPs) * float64(m.Samples) / m.Took.Seconds()
	m.FLOPRate = m.Rate * perSample
	return m, nil
}

// time times baking MLPs 0..mlps-1 of in's shape with n samples each.
func (in CalibrateInput) time(ctx context.Context, eng Engine, mlps int, n int64,
) (time.Duration, error) {
	t0 := time.Now()
	spec := bakeapi.Spec{
		Width:    in.Width,
		Depth:    in.Depth,
		NSamples: n,
		Sampler:  bakeapi.SamplerPhilox,
	}
	for i := 0; i < mlps; i++ {
		job, err := JobForSeed(spec, int64(i))
		if err != nil {
			return 0, err
		}
		job.Threads = in.Threads
		if _, err := eng.BakeMLP(ctx, spec, job, nil, nil); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// calibrationSamples is the per-MLP sample count that makes a run of mlps
// MLPs last about target at the probed rate: a multiple of the tile,
// between the probe's size and the full bake's.
func calibrationSamples(probeSamples int64, probe, target time.Duration, mlps int, limit int64,
) int64 {
	rate := float64(probeSamples) / math.Max(probe.Seconds(), 1e-9)
	n := int64(rate * target.Seconds() / float64(mlps))
	n = n / PhiloxTile * PhiloxTile
	return min(limit, max(probeSamples, n))
}

// Project scales the calibration run linearly to a bake of nMLPs ×
// nSamples.
func (m Calibration) Project(nMLPs, nSamples int64) time.Duration {
	perUnit := m.Took.Seconds() / (float64(m.MLPs) * float64(m.Samples))
	return time.Duration(perUnit * float64(nMLPs) * float64(nSamples) * float64(time.Second))
}

// Rates are DefaultRates with the device's rate, and a GPU's start-up, as
// this calibration measured them at width, on threads CPU threads.
func (m Calibration) Rates(device string, width, threads int) Rates {
	r := DefaultRates
	switch device {
	case DeviceCUDA:
		r.GPUFLOPS = m.FLOPRate / math.Min(1, float64(width)/256)
		r.GPUStartup = m.Warm
	default:
		r.CPUFLOPSPerThread = m.FLOPRate / float64(max(1, threads))
	}
	return r
}
