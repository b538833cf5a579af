package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/rows"
)

type calibrateFlags struct {
	nMLPs, nSamples, width, depth, threads int64
	device                                 string
	target                                 time.Duration
}

func newCalibrateCmd() *cobra.Command {
	var f calibrateFlags
	cmd := &cobra.Command{
		Use: "calibrate [--n-mlps N] [--n-samples N] [--width W] [--depth D] " +
			"[--device auto|cpu|cuda]",
		Short: "Time a short bake on this machine's device and project the full bake's wall time",
		Long: "Warms the engine up (on a GPU: context and kernel compilation), " +
			"times a calibration bake of a few MLPs\n" +
			"sized to last about --seconds, " +
			"and projects the full bake linearly in MLPs and samples, as whestbench's\n" +
			"calibration recipe does. " +
			"Also prints the device --device auto would pick for the bake.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibrate(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.Var(newFieldCount(&f.nMLPs, 10), "n-mlps", "MLPs of the bake to project")
	fl.Var(newFieldCount(&f.nSamples, 1_000_000_000), "n-samples",
		"samples per MLP of the bake to project")
	fl.Var(newFieldCount(&f.width, 256), "width", "neurons per layer")
	fl.Var(newFieldCount(&f.depth, 8), "depth", "layers")
	fl.StringVar(&f.device, "device", gpuengine.DeviceAuto,
		"auto, cpu or cuda (explicit choices never fall back)")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fl.DurationVar(&f.target, "seconds", 3*time.Second, "wall time of the calibration run")
	fromKey(fl, map[string]string{
		"width":     "bake.width",
		"depth":     "bake.depth",
		"n-samples": "bake.n-samples",
		"device":    "worker.device",
		"threads":   "worker.threads",
	})
	return cmd
}

func runCalibrate(ctx context.Context, out io.Writer, f calibrateFlags) error {
	if f.target <= 0 {
		return cmdline.Usagef("--seconds must be positive, got %v", f.target)
	}
	// The bake to project is checked like a bake of the default split.
	plan := rows.Plan{
		NMLPs:  int(f.nMLPs),
		Split:  dataset.DefaultSplit,
		Config: dataset.DefaultConfig,
		Spec: bakeapi.Spec{
			Width:    int(f.width),
			Depth:    int(f.depth),
			NSamples: f.nSamples,
			Sampler:  bakeapi.SamplerPhilox,
		},
	}
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
	m, err := gpuengine.Calibrate(ctx, eng, gpuengine.CalibrateInput{
		Width:    int(f.width),
		Depth:    int(f.depth),
		NMLPs:    f.nMLPs,
		NSamples: f.nSamples,
		Threads:  int(f.threads),
		Target:   f.target,
		Opened:   start,
	})
	if err != nil {
		return err
	}
	if err := printCalibration(out, desc, f, m); err != nil {
		return err
	}
	printAutoDevice(out, desc.Device, f, m)
	return nil
}

// printCalibration prints the device and the table of the warm-up, the
// calibration run and the projected full bake.
func printCalibration(out io.Writer, desc gpuengine.Description, f calibrateFlags,
	m gpuengine.Calibration,
) error {
	full := m.Project(f.nMLPs, f.nSamples)
	fmt.Fprintf(out, "whestbake calibrate: %s, %s (%s), %d threads, %d×%d\n\n",
		desc.Device, desc.DeviceName, desc.Kernel, f.threads, f.width, f.depth)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tMLPs\tsamples/MLP\twall\tsamples/s\tGFLOP/s\t")
	fmt.Fprintf(tw, "warm-up\t1\t%d\t%s\t\t\t\n", m.WarmSamples, formatDuration(m.Warm))
	fmt.Fprintf(tw, "calibration\t%d\t%d\t%s\t%.4g\t%.1f\t\n",
		m.MLPs, m.Samples, formatDuration(m.Took), m.Rate, m.FLOPRate/1e9)
	fmt.Fprintf(tw, "projection\t%d\t%d\t%s\t\t\t\n", f.nMLPs, f.nSamples, formatDuration(full))
	return tw.Flush()
}

// printAutoDevice says what --device auto would do, with this run's
// measurement in place of its default.
func printAutoDevice(out io.Writer, device string, f calibrateFlags, m gpuengine.Calibration) {
	width := int(f.width)
	depth := int(f.depth)
	threads := int(f.threads)
	r := m.Rates(device, width, threads)
	switch device {
	case gpuengine.DeviceCUDA:
		fmt.Fprintf(out, "\nmeasured: GPU %.3g FLOP/s at %d×%d, startup %s "+
			"(gpuengine.DefaultRates in gpuengine/cost.go: %.3g FLOP/s, %s)\n",
			r.GPUFLOPS, width, depth, formatDuration(m.Warm),
			gpuengine.DefaultRates.GPUFLOPS, gpuengine.DefaultRates.GPUStartup)
	default:
		fmt.Fprintf(out, "\nmeasured: CPU %.3g FLOP/s per thread at %d×%d "+
			"(gpuengine.DefaultRates in gpuengine/cost.go: %.3g)\n",
			r.CPUFLOPSPerThread, width, depth, gpuengine.DefaultRates.CPUFLOPSPerThread)
	}
	choice := "the CPU"
	if r.PreferGPU(width, depth, f.nMLPs, f.nSamples, threads) {
		choice = "the GPU (in a CUDA build on a machine with one)"
	}
	fmt.Fprintf(out, "--device auto would choose %s for this bake: "+
		"the GPU pays off above %.3g MLP·samples at %d×%d against %d CPU threads\n",
		choice, r.Crossover(width, depth, threads), width, depth, threads)
}
