package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
)

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
	fl.Var(newFieldCount(&f.nMLPs, 10), "n-mlps", "MLPs of the bake to project")
	fl.Var(newFieldCount(&f.nSamples, 1_000_000_000), "n-samples", "samples per MLP of the bake to project")
	fl.Var(newFieldCount(&f.width, 256), "width", "neurons per layer")
	fl.Var(newFieldCount(&f.depth, 8), "depth", "layers")
	fl.StringVar(&f.device, "device", gpuengine.DeviceAuto, "auto, cpu or cuda (explicit choices never fall back)")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fl.DurationVar(&f.target, "seconds", 3*time.Second, "wall time of the calibration run")
	fromKey(fl, map[string]string{"width": "bake.width", "depth": "bake.depth", "n-samples": "bake.n-samples",
		"device": "worker.device", "threads": "worker.threads"})
	return cmd
}

func runCalibrate(ctx context.Context, out io.Writer, f calibrateFlags) error {
	if f.target <= 0 {
		return cmdline.Usagef("--seconds must be positive, got %v", f.target)
	}
	// The bake to project is checked like a bake of the default split.
	plan := bake.Plan{NMLPs: int(f.nMLPs), Split: dataset.DefaultSplit, Config: dataset.DefaultConfig,
		Spec: bakeapi.Spec{Width: int(f.width), Depth: int(f.depth), NSamples: f.nSamples, Sampler: bakeapi.SamplerPhilox}}
	if err := plan.ValidateSettings(); err != nil {
		return cmdline.Usage(bakeapi.Rename(err, flagOf))
	}
	start := time.Now()
	eng, err := gpuengine.Open(f.device, bakeapi.SamplerPhilox)
	if err != nil {
		return bakeapi.Rename(err, flagOf)
	}
	defer func() { _ = gpuengine.Close(eng) }() // the GPU's modules and memory; nothing for the CPU
	desc := eng.Describe()
	m, err := measureCalibration(ctx, eng, f, start)
	if err != nil {
		return err
	}
	if err := printCalibration(out, desc, f, m); err != nil {
		return err
	}
	printAutoDevice(out, desc.Device, f, m)
	return nil
}

// calibration is what calibrate measured: the warm-up, and the calibration
// run with its rates.
type calibration struct {
	warmN    int64         // samples of the warm-up's one MLP
	warm     time.Duration // from opening the engine to the end of the warm-up
	mlps     int
	calN     int64 // samples per MLP of the calibration run
	took     time.Duration
	rate     float64 // samples per second
	flopRate float64 // FLOP per second
}

// measureCalibration warms eng up, probes its rate and times a calibration
// run sized from the probe; start is when eng was opened.
func measureCalibration(ctx context.Context, eng gpuengine.Engine, f calibrateFlags, start time.Time) (calibration, error) {
	// Warm-up: everything paid once per process (GPU context, NVRTC compile).
	m := calibration{warmN: min(f.nSamples, 4096)}
	if _, err := timeBakes(ctx, eng, f, 1, m.warmN); err != nil {
		return m, err
	}
	m.warm = time.Since(start)
	// Probe until a run is long enough to time, then size the calibration run from it.
	probeN := min(f.nSamples, 1<<14)
	probe, err := timeBakes(ctx, eng, f, 1, probeN)
	for err == nil && probe < f.target/20 && probeN < f.nSamples {
		probeN = min(f.nSamples, probeN*4)
		probe, err = timeBakes(ctx, eng, f, 1, probeN)
	}
	if err != nil {
		return m, err
	}
	m.mlps = int(min(f.nMLPs, 3))
	m.calN = calibrationSamples(probeN, probe, f.target, m.mlps, f.nSamples)
	if m.took, err = timeBakes(ctx, eng, f, m.mlps, m.calN); err != nil {
		return m, err
	}
	perSample := 2 * float64(f.width) * float64(f.width) * float64(f.depth)
	m.rate = float64(m.mlps) * float64(m.calN) / m.took.Seconds()
	m.flopRate = m.rate * perSample
	return m, nil
}

// timeBakes times baking MLPs 0..mlps-1 of f's shape with n samples each.
func timeBakes(ctx context.Context, eng gpuengine.Engine, f calibrateFlags, mlps int, n int64) (time.Duration, error) {
	t0 := time.Now()
	spec := bakeapi.Spec{Width: int(f.width), Depth: int(f.depth), NSamples: n, Sampler: bakeapi.SamplerPhilox}
	for i := 0; i < mlps; i++ {
		job, err := gpuengine.JobForSeed(spec, int64(i))
		if err != nil {
			return 0, err
		}
		job.Threads = int(f.threads)
		if _, err := eng.BakeMLP(ctx, spec, job, nil, nil); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// printCalibration prints the device and the table of the warm-up, the
// calibration run and the projected full bake.
func printCalibration(out io.Writer, desc gpuengine.Description, f calibrateFlags, m calibration) error {
	full := project(m.took, m.mlps, m.calN, f.nMLPs, f.nSamples)
	fmt.Fprintf(out, "whestbake calibrate: %s, %s (%s), %d threads, %d×%d\n\n", desc.Device, desc.DeviceName, desc.Kernel, f.threads, f.width, f.depth)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tMLPs\tsamples/MLP\twall\tsamples/s\tGFLOP/s\t")
	fmt.Fprintf(tw, "warm-up\t1\t%d\t%s\t\t\t\n", m.warmN, formatDuration(m.warm))
	fmt.Fprintf(tw, "calibration\t%d\t%d\t%s\t%.4g\t%.1f\t\n", m.mlps, m.calN, formatDuration(m.took), m.rate, m.flopRate/1e9)
	fmt.Fprintf(tw, "projection\t%d\t%d\t%s\t\t\t\n", f.nMLPs, f.nSamples, formatDuration(full))
	return tw.Flush()
}

// printAutoDevice says what --device auto would do, with this run's
// measurement in place of its default.
func printAutoDevice(out io.Writer, device string, f calibrateFlags, m calibration) {
	w, d, threads := int(f.width), int(f.depth), int(f.threads)
	r := gpuengine.DefaultRates
	switch device {
	case gpuengine.DeviceCUDA:
		r.GPUFLOPS = m.flopRate / math.Min(1, float64(w)/256)
		r.GPUStartup = m.warm
		fmt.Fprintf(out, "\nmeasured: GPU %.3g FLOP/s at %d×%d, startup %s (gpuengine.DefaultRates in gpuengine/cost.go: %.3g FLOP/s, %s)\n",
			r.GPUFLOPS, w, d, formatDuration(m.warm), gpuengine.DefaultRates.GPUFLOPS, gpuengine.DefaultRates.GPUStartup)
	default:
		r.CPUFLOPSPerThread = m.flopRate / float64(max(1, threads))
		fmt.Fprintf(out, "\nmeasured: CPU %.3g FLOP/s per thread at %d×%d (gpuengine.DefaultRates in gpuengine/cost.go: %.3g)\n",
			r.CPUFLOPSPerThread, w, d, gpuengine.DefaultRates.CPUFLOPSPerThread)
	}
	choice := "the CPU"
	if r.PreferGPU(w, d, f.nMLPs, f.nSamples, threads) {
		choice = "the GPU (in a CUDA build on a machine with one)"
	}
	fmt.Fprintf(out, "--device auto would choose %s for this bake: the GPU pays off above %.3g MLP·samples at %d×%d against %d CPU threads\n",
		choice, r.Crossover(w, d, threads), w, d, threads)
}
