package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bake"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/seeds"
)

// deviceRates are what the CPU/GPU choice of --device auto compares.
type deviceRates struct {
	CPUFLOPSPerThread float64       // effective FLOP/s (2·W²·D per sample) of one CPU thread, philox twin
	GPUFLOPS          float64       // effective FLOP/s of the GPU at W ≥ 256
	GPUStartup        time.Duration // once per process: context, NVRTC compile, module load
}

// defaultRates decide --device auto until the H100 has been measured (`whestbake
// calibrate --device cuda` prints the values to put here; docs/GPU.md). They are
// deliberately unfavourable to the GPU, which loses badly on tiny work: the CPU figure
// is the AVX2 twin's measured rate (60 GFLOP/s per thread on the build machine's
// Xeon at 256×8); the GPU figure is under half of the fused kernel's 44 TFLOP/s
// target and the startup above the ~1 s an NVRTC compile plus context creation take.
var defaultRates = deviceRates{CPUFLOPSPerThread: 60e9, GPUFLOPS: 20e12, GPUStartup: 3 * time.Second}

// gpuRate is the GPU's effective rate at width w. Narrow layers leave most FMA units
// idle while the per-sample input generation stays, so the rate is taken to fall
// linearly below 256 (conservative; to be replaced by measured points).
func (r deviceRates) gpuRate(w int) float64 {
	return r.GPUFLOPS * math.Min(1, float64(w)/256)
}

// crossover is the bake size (MLPs × samples) above which the GPU finishes first for a
// W×D network against `threads` CPU threads; +Inf when the GPU never does.
func crossover(w, d, threads int, r deviceRates) float64 {
	perSample := 2 * float64(w) * float64(w) * float64(d)
	saved := perSample/(r.CPUFLOPSPerThread*float64(max(1, threads))) - perSample/r.gpuRate(w)
	if saved <= 0 {
		return math.Inf(1)
	}
	return r.GPUStartup.Seconds() / saved
}

// preferGPU reports whether --device auto should run a bake of nMLPs × nSamples on the GPU.
func preferGPU(w, d int, nMLPs, nSamples int64, threads int, r deviceRates) bool {
	return float64(nMLPs)*float64(nSamples) > crossover(w, d, threads, r)
}

// calibrationSamples is the per-MLP sample count that makes a run of mlps MLPs last
// about target at the probed rate: a multiple of the tile, between the probe's size
// and the full bake's.
func calibrationSamples(probeSamples int64, probe time.Duration, target time.Duration, mlps int, limit int64) int64 {
	rate := float64(probeSamples) / math.Max(probe.Seconds(), 1e-9)
	n := int64(rate * target.Seconds() / float64(mlps))
	n = n / gpuengine.PhiloxTile * gpuengine.PhiloxTile
	return min(limit, max(probeSamples, n))
}

// project scales a calibration run of calMLPs × calSamples lasting took to the full bake.
func project(took time.Duration, calMLPs int, calSamples int64, nMLPs, nSamples int64) time.Duration {
	perUnit := took.Seconds() / (float64(calMLPs) * float64(calSamples))
	return time.Duration(perUnit * float64(nMLPs) * float64(nSamples) * float64(time.Second))
}

type calibrateFlags struct {
	nMLPs, nSamples, width, depth, threads int64
	device                                 string
	target                                 time.Duration
}

func newCalibrateCmd() *cobra.Command {
	var f calibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate [--n-mlps N] [--n-samples N] [--width W] [--depth D] [--device auto|cpu|cuda]",
		Short: "Time a short bake on this machine's device and project the full bake's wall time",
		Long: "Warms the engine up (on a GPU: context and kernel compilation), times a calibration bake of a few MLPs\n" +
			"sized to last about --seconds, and projects the full bake linearly in MLPs and samples, as whestbench's\n" +
			"calibration recipe does. Also prints the device --device auto would pick for the bake.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCalibrate(cmd.Context(), cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.Var(newCount(&f.nMLPs, 10, bake.MaxNMLPs), "n-mlps", "MLPs of the bake to project")
	fl.Var(newCount(&f.nSamples, 1_000_000_000, bake.MaxNSamples), "n-samples", "samples per MLP of the bake to project")
	fl.Var(newCount(&f.width, 256, bake.MaxWidth), "width", "neurons per layer")
	fl.Var(newCount(&f.depth, 8, bake.MaxDepth), "depth", "layers")
	fl.StringVar(&f.device, "device", gpuengine.DeviceAuto, "auto, cpu or cuda (explicit choices never fall back)")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fl.DurationVar(&f.target, "seconds", 3*time.Second, "wall time of the calibration run")
	return cmd
}

func runCalibrate(ctx context.Context, out io.Writer, f calibrateFlags) error {
	if f.target <= 0 {
		return usagef("--seconds must be positive, got %v", f.target)
	}
	w, d, threads := int(f.width), int(f.depth), int(f.threads)
	start := time.Now()
	eng, err := gpuengine.Open(f.device, gpuengine.SamplerPhilox)
	if err != nil {
		return err
	}
	desc := eng.Describe()
	timeBake := func(mlps int, n int64) (time.Duration, error) {
		t0 := time.Now()
		for i := 0; i < mlps; i++ {
			st := seeds.DeriveV3(uint64(i))
			wt, err := seeds.Weights(w, d, st.Weight)
			if err != nil {
				return 0, err
			}
			spec := gpuengine.Spec{Width: w, Depth: d, NSamples: n, Sampler: gpuengine.SamplerPhilox, Threads: threads}
			if _, err := eng.BakeMLP(ctx, spec, gpuengine.Job{Weights: wt, Sample: st.Sample}, nil, nil); err != nil {
				return 0, err
			}
		}
		return time.Since(t0), nil
	}

	// Warm-up: everything paid once per process (GPU context, NVRTC compile).
	warmN := min(f.nSamples, 4096)
	if _, err := timeBake(1, warmN); err != nil {
		return err
	}
	warm := time.Since(start)
	// Probe until a run is long enough to time, then size the calibration run from it.
	probeN := min(f.nSamples, 1<<14)
	probe, err := timeBake(1, probeN)
	for err == nil && probe < f.target/20 && probeN < f.nSamples {
		probeN = min(f.nSamples, probeN*4)
		probe, err = timeBake(1, probeN)
	}
	if err != nil {
		return err
	}
	mlps := int(min(f.nMLPs, 3))
	calN := calibrationSamples(probeN, probe, f.target, mlps, f.nSamples)
	took, err := timeBake(mlps, calN)
	if err != nil {
		return err
	}

	perSample := 2 * float64(w) * float64(w) * float64(d)
	rate := float64(mlps) * float64(calN) / took.Seconds()
	full := project(took, mlps, calN, f.nMLPs, f.nSamples)
	fmt.Fprintf(out, "whestbake calibrate: %s, %s (%s), %d threads, %d×%d\n\n", desc.Device, desc.DeviceName, desc.Kernel, threads, w, d)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tMLPs\tsamples/MLP\twall\tsamples/s\tGFLOP/s\t")
	fmt.Fprintf(tw, "warm-up\t1\t%d\t%s\t\t\t\n", warmN, formatDuration(warm))
	fmt.Fprintf(tw, "calibration\t%d\t%d\t%s\t%.4g\t%.1f\t\n", mlps, calN, formatDuration(took), rate, rate*perSample/1e9)
	fmt.Fprintf(tw, "projection\t%d\t%d\t%s\t\t\t\n", f.nMLPs, f.nSamples, formatDuration(full))
	if err := tw.Flush(); err != nil {
		return err
	}

	// What --device auto would do, with this run's measurement in place of its default.
	r := defaultRates
	switch desc.Device {
	case gpuengine.DeviceCUDA:
		r.GPUFLOPS = rate * perSample / math.Min(1, float64(w)/256)
		r.GPUStartup = warm
		fmt.Fprintf(out, "\nmeasured: GPU %.3g FLOP/s at %d×%d, startup %s (defaultRates in cli/calibrate.go: %.3g FLOP/s, %s)\n",
			r.GPUFLOPS, w, d, formatDuration(warm), defaultRates.GPUFLOPS, defaultRates.GPUStartup)
	default:
		r.CPUFLOPSPerThread = rate * perSample / float64(max(1, threads))
		fmt.Fprintf(out, "\nmeasured: CPU %.3g FLOP/s per thread at %d×%d (defaultRates in cli/calibrate.go: %.3g)\n",
			r.CPUFLOPSPerThread, w, d, defaultRates.CPUFLOPSPerThread)
	}
	choice := "the CPU"
	if preferGPU(w, d, f.nMLPs, f.nSamples, threads, r) {
		choice = "the GPU (in a CUDA build on a machine with one)"
	}
	fmt.Fprintf(out, "--device auto would choose %s for this bake: the GPU pays off above %.3g MLP·samples at %d×%d against %d CPU threads\n",
		choice, crossover(w, d, threads, r), w, d, threads)
	return nil
}
