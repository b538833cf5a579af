package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bench"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/gpuengine/kernel"
)

func newBenchCmd() *cobra.Command {
	var (
		configs, python, script string
		nSamples, threads       int64
		noPeer                  bool
	)
	cmd := &cobra.Command{
		Use:   "bench [--configs 256x8,64x4] [--n-samples N]",
		Short: "Measure the CPU engines side by side with a numpy peer (samples/s, GFLOP/s, ratio)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfgs, err := bench.ParseConfigs(configs, nSamples)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "whestbake bench: %s, %d threads, kernel %s, %s/%s\n\n", gpuengine.CPU{}.Describe().DeviceName, threads, kernel.Impl(), runtime.GOOS, runtime.GOARCH)
			gpus, err := gpuEngines()
			if err != nil {
				return err
			}
			var results []bench.Result
			for _, c := range cfgs {
				for _, g := range gpus {
					results = append(results, bench.EngineOn(cmd.Context(), g.name, g.eng, c, gpuengine.SamplerPhilox, "", int(threads)))
				}
				results = append(results,
					bench.Engine(cmd.Context(), "whestbake philox (CPU twin)", c, gpuengine.SamplerPhilox, "", int(threads)),
					bench.Engine(cmd.Context(), "whestbake numpy (fma)", c, gpuengine.SamplerNumpy, gpuengine.DotFMA, int(threads)),
				)
				if !noPeer {
					results = append(results, bench.Peer(cmd.Context(), python, script, c, int(threads)))
				}
			}
			bench.Table(out, results, "numpy-openblas")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configs, "configs", "256x8,64x4", "comma-separated WIDTHxDEPTH shapes")
	fl.Var(newCount(&nSamples, 1<<17, 1<<40), "n-samples", "samples per measurement")
	fl.Var(newCount(&threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads for every implementation")
	fl.StringVar(&python, "python", "/usr/bin/python3", "python interpreter with numpy for the peer")
	fl.StringVar(&script, "peer-script", "bench/numpy_peer.py", "the numpy peer script")
	fl.BoolVar(&noPeer, "no-peer", false, "skip the numpy peer")
	return cmd
}

// namedEngine is an engine under the name its bench row carries.
type namedEngine struct {
	name string
	eng  gpuengine.Engine
}
