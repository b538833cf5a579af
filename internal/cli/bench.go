package cli

import (
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bench"
)

// benchFlags are `whestbake bench`'s options.
type benchFlags struct {
	configs, python, script string
	torchDevice             string
	nSamples, cpuSamples    int64
	threads, torchMLPs      int64
	torchChunk              int64
	peakTFLOPS              float64
	noPeer, torchPeer       bool
	phases                  bool
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use: "bench [--configs 256x8,64x4] [--n-samples N] [--torch-peer]",
		Short: "Measure the engines side by side with whestbench's own bakes " +
			"(samples/s, FLOP/s, ratios)",
		Long: `Measure the engines side by side with whestbench's own bakes.

Every configuration runs the CUDA engine's fused and cuBLAS paths (cuda builds),
the torch peer (--torch-peer: whestbench's create_dataset_torch), the CPU engines
and the numpy peer (whestbench's create_dataset), in that order, and prints one
markdown table: throughput, effective FLOP/s (2·W²·D per sample) and, per peer
that ran, each row's throughput over the peer's. A peer's time is whestbench's
sampling function as its bake calls it (internal/bench/whestbench_peer.py). With
a GPU row the table adds the share of the GPU's FP32 peak (--peak-tflops).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.peakTFLOPS <= 0 {
				return fmt.Errorf("--peak-tflops %g: give the GPU's FP32 peak in TFLOP/s "+
					"(66.9 for an H100 SXM)", f.peakTFLOPS)
			}
			if f.torchChunk < 0 {
				return fmt.Errorf("--torch-chunk-size %d: "+
					"give rows per chunk, or 0 for whestbench's rule", f.torchChunk)
			}
			if f.torchDevice != gpuengine.DeviceCUDA && f.torchDevice != gpuengine.DeviceCPU {
				return fmt.Errorf("--torch-device %q: use cuda or cpu", f.torchDevice)
			}
			// The judge with PyTorch runs both peers: it reads whestbench and
			// numpy from the judge's own site-packages.
			install := bench.NumpyPeerInstall
			if f.torchPeer {
				install = bench.TorchPeerInstall
				if f.python == "" {
					f.python = bench.TorchPython
				}
			}
			if f.python == "" {
				f.python = bench.JudgePython
			}
			if f.torchPeer || !f.noPeer {
				if err := bench.NeedPython(f.python, install); err != nil {
					return err
				}
			}
			return runBench(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configs, "configs", "256x8,64x4", "comma-separated WIDTHxDEPTH shapes")
	fl.Var(newCount(&f.nSamples, 1<<17, 1<<40), "n-samples", "samples per measurement")
	fl.Var(newCount(&f.cpuSamples, 0, 1<<40), "cpu-n-samples",
		"samples per measurement on the CPU rows (CPU engines, numpy peer, torch on cpu); "+
			"default --n-samples")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads",
		"CPU threads for every CPU implementation")
	fromKey(fl, map[string]string{"threads": "worker.threads"})
	fl.StringVar(&f.python, "python", "",
		"interpreter of the peers (default "+bench.JudgePython+", the Python judge: "+
			"make pyjudge; with --torch-peer "+bench.TorchPython+
			", the judge with PyTorch: make pyjudge-torch)")
	fl.StringVar(&f.script, "peer-script", bench.PeerScript,
		"the peers' driver, which runs and times whestbench's bakes")
	fl.BoolVar(&f.noPeer, "no-peer", false, "skip the numpy peer")
	fl.BoolVar(&f.torchPeer, "torch-peer", false,
		"also run the torch peer, whestbench's create_dataset_torch")
	fl.StringVar(&f.torchDevice, "torch-device", gpuengine.DeviceCUDA,
		"device of the torch peer: cuda or cpu")
	fl.Var(newCount(&f.torchMLPs, 10, 1<<20), "torch-mlps",
		"MLPs the torch peer batches (sharing the samples), "+
			"as a whestbench bake of that many runs them")
	fl.Int64Var(&f.torchChunk, "torch-chunk-size", 0,
		"torch peer rows per chunk (0: whestbench's rule, "+
			"a quarter of free GPU memory on CUDA, 65536 on the CPU)")
	fl.BoolVar(&f.phases, "phases", false, "cuda builds: after the table, "+
		"time every operation of the cuBLAS path (RNG, GEMM, reduction, copies, idle) "+
		"per configuration")
	fl.Float64Var(&f.peakTFLOPS, "peak-tflops", 66.9,
		"the GPU's FP32 peak in TFLOP/s, for the % of peak column (H100 SXM 66.9, H100 PCIe 51.2)")
	return cmd
}

func runBench(cmd *cobra.Command, f benchFlags) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	threads := int(f.threads)
	cfgs, err := bench.ParseConfigs(f.configs, f.nSamples)
	if err != nil {
		return err
	}
	cpuSamples := f.cpuSamples
	if cpuSamples == 0 {
		cpuSamples = f.nSamples
	}
	cpu := gpuengine.CPU{}.Describe()
	fmt.Fprintf(out, "whestbake bench: %s, %d threads, kernel %s, %s/%s\n",
		cpu.DeviceName, threads, cpu.Kernel, runtime.GOOS, runtime.GOARCH)

	// The torch peer runs before the CUDA engine opens its context: on a GPU in
	// exclusive-process compute mode only one process may hold a context, and the
	// engine keeps its own until the bench ends.
	torch := make([]bench.Result, len(cfgs))
	if f.torchPeer {
		fmt.Fprintln(out, "torch peer: measured first, before the CUDA engine opens the GPU "+
			"(exclusive-process compute mode admits one process)")
		for i, c := range cfgs {
			if f.torchDevice == gpuengine.DeviceCPU {
				c = bench.Config{Width: c.Width, Depth: c.Depth, NSamples: cpuSamples}
			}
			torch[i] = bench.TorchPeer(ctx, f.python, f.script, c, bench.TorchOptions{
				Device:    f.torchDevice,
				MLPs:      int(f.torchMLPs),
				ChunkSize: f.torchChunk,
				Threads:   threads,
			})
		}
	}
	gpus, err := gpuEngines()
	if err != nil {
		return err
	}
	defer func() {
		for _, g := range gpus {
			_ = gpuengine.Close(g.eng)
		}
	}()
	if len(gpus) > 0 {
		fmt.Fprintf(out, "GPU: %s; %% of FP32 peak against %g TFLOP/s\n",
			gpus[0].eng.Describe().DeviceName, f.peakTFLOPS)
	}
	fmt.Fprintln(out)

	var results []bench.Result
	for i, c := range cfgs {
		onCPU := bench.Config{Width: c.Width, Depth: c.Depth, NSamples: cpuSamples}
		for _, g := range gpus {
			results = append(results,
				bench.EngineOn(ctx, g.name, g.eng, c, bakeapi.SamplerPhilox, "", threads))
		}
		if f.torchPeer {
			results = append(results, torch[i])
		}
		results = append(results,
			bench.Engine(ctx, "whestbake philox (CPU twin)",
				onCPU, bakeapi.SamplerPhilox, "", threads),
			bench.Engine(ctx, "whestbake numpy (fma)",
				onCPU, bakeapi.SamplerNumpy, bakeapi.DotFMA, threads),
		)
		if !f.noPeer {
			results = append(results, bench.NumpyPeer(ctx, f.python, f.script, onCPU, threads))
		}
	}
	bench.Table(out, results, f.peakTFLOPS)
	if f.phases {
		return benchPhases(cmd, cfgs, results)
	}
	return nil
}

// namedEngine is an engine under the name its bench row carries.
type namedEngine struct {
	name string
	eng  gpuengine.Engine
}

// benchPhases prints the cuBLAS path's phase breakdown per configuration, beside the
// unprofiled cuBLAS row's time: recording events adds host time per launch, which
// inflates Idle when the two differ by more than a few percent.
func benchPhases(cmd *cobra.Command, cfgs []bench.Config, results []bench.Result) error {
	out := cmd.OutOrStdout()
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| configuration | phase | ms per 1e6 samples | share of wall time |")
	fmt.Fprintln(out, "|---|---|---|---|")
	for _, c := range cfgs {
		p, err := gpuPhases(cmd.Context(), c)
		if err != nil {
			fmt.Fprintf(out, "| %dx%d | error | %v | |\n", c.Width, c.Depth, err)
			continue
		}
		perMillion := float64(c.NSamples) / 1e6
		per := func(d time.Duration) float64 { return d.Seconds() * 1e3 / perMillion }
		for _, ph := range []struct {
			name  string
			spent time.Duration
		}{
			{"RNG (gen_inputs)", p.RNG},
			{"GEMM (cublasSgemm)", p.GEMM},
			{"reduction (relu_tilesum)", p.Reduce},
			{"copies", p.Copies},
			{"idle (host, launch gaps)", p.Idle()},
			{"wall, profiled", p.Wall},
		} {
			fmt.Fprintf(out, "| %dx%d | %s | %.3f | %.1f %% |\n",
				c.Width, c.Depth, ph.name, per(ph.spent), 100*ph.spent.Seconds()/p.Wall.Seconds())
		}
		for _, r := range results {
			cuBLASRow := r.Impl == "whestbake cuda "+gpuengine.CUDAPathCuBLAS
			if cuBLASRow && r.Config == c && r.Err == nil {
				fmt.Fprintf(out, "| %dx%d | wall, unprofiled (table row) | %.3f | |\n",
					c.Width, c.Depth, r.Seconds*1e3/perMillion)
			}
		}
	}
	return nil
}
