package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bench"
	"github.com/whestbake/whestbake/internal/bench/gate"
	"github.com/whestbake/whestbake/internal/bench/suite"
	"github.com/whestbake/whestbake/internal/cputime"
)

// cpuReport is `benchgate cpu`, which `make bench-cpu` runs: the measurements behind
// docs/benchmarks.md's CPU tables, on the machine at hand, all in CPU time
// so that a shared machine's neighbours hardly move them: the core clock and
// the FP32 peak it gives, the forward kernel alone, the philox twin whole
// and by phase on one and two threads, and the numpy peer, at the gate's engine
// shapes. Rounds interleave every measurement, so a machine that changes
// pace favours none.
func cpuReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cpu", flag.ContinueOnError)
	rounds := fs.Int("rounds", 5, "rounds of every measurement")
	clockRuns := fs.Int("clock-runs", 10, "runs of the core clock's chain of 800 million additions")
	profiles := fs.String("pprof", "",
		"also write a CPU profile of each shape's one-thread twin, "+
			"a bake of 4 rounds' samples, into this directory")
	python := fs.String("python", bench.JudgePython,
		"interpreter of the numpy peer, whestbench's create_dataset: the Python judge (make pyjudge)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 || *clockRuns < 1 {
		return fmt.Errorf("--rounds %d and --clock-runs %d must be positive", *rounds, *clockRuns)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run from the module root (make bench-cpu): "+
			"the numpy peer is %s", bench.PeerScript)
	}
	if err := bench.NeedPython(*python, bench.NumpyPeerInstall); err != nil {
		return err
	}
	class := hostClass()
	fmt.Fprintf(stdout, "machine:  %s\nclass:    %s\n", machineLine(ctx, *python), class)

	var clocks []float64
	for range *clockRuns {
		hz, err := cputime.CoreClock(8e8)
		if err != nil {
			return err
		}
		clocks = append(clocks, hz/1e9)
	}
	ghz := gate.Metric{Values: clocks}.Median()
	fmt.Fprintf(stdout, "clock:    %s GHz "+
		"(a chain of 800 million dependent additions in thread CPU time, %d runs)\n",
		spread(clocks, "%.2f"), *clockRuns)
	lanes, why := fmaLanes(class)
	peak := float64(lanes) * 2 * ghz
	if lanes > 0 {
		fmt.Fprintf(stdout,
			"peak:     %.1f GFLOP/s per core: %d FP32 FMA lanes × 2 × %.2f GHz (%s)\n",
			peak, lanes, ghz, why)
	} else {
		fmt.Fprintf(stdout, "peak:     not given (%s)\n", why)
	}
	if *profiles != "" {
		if err := os.MkdirAll(*profiles, 0o755); err != nil {
			return err
		}
	}

	script := filepath.FromSlash(bench.PeerScript)
	var shapes []*shapeReport
	for _, sh := range suite.EngineShapes {
		shapes = append(shapes, &shapeReport{EngineShape: sh})
	}
	for round := range *rounds {
		for _, r := range shapes {
			fmt.Fprintf(stderr, "round %d/%d, W=%d D=%d\n", round+1, *rounds, r.Width, r.Depth)
			if err := r.measure(ctx); err != nil {
				return err
			}
			shape := bench.Config{Width: r.Width, Depth: r.Depth, NSamples: r.Samples}
			peer := bench.NumpyPeer(ctx, *python, script, shape, 1)
			if peer.Err != nil {
				return peer.Err
			}
			r.peer = append(r.peer, float64(peer.Config.NSamples)/peer.CPUSeconds)
			r.peerRanOn = peer.RanOn
		}
	}
	for _, r := range shapes {
		r.write(stdout, peak)
	}
	if *profiles == "" {
		return nil
	}
	for _, r := range shapes {
		path := filepath.Join(*profiles, fmt.Sprintf("philox-W%dxD%d.pprof", r.Width, r.Depth))
		fmt.Fprintf(stderr, "profiling W=%d D=%d into %s\n", r.Width, r.Depth, path)
		if err := r.profile(ctx, path); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nCPU profiles of the one-thread twin: %s/philox-*.pprof "+
		"(go tool pprof -top FILE)\n", *profiles)
	return nil
}

// profile writes a CPU profile of one one-thread bake of four timed bakes'
// samples into path; pprof samples CPU time, 100 a second.
func (r *shapeReport) profile(ctx context.Context, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	spec := r.spec()
	spec.NSamples *= 4
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	_, err = suite.Probe(ctx, spec, suite.ProbeOptions{Threads: 1})
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	return f.Close()
}

// fmaLanes is how many FP32 lanes the cores of class complete FMAs on per
// cycle, for the kernel the engines chose, and why.
func fmaLanes(c gate.Class) (int, string) {
	switch {
	case c.Kernel == "avx2-fma":
		return 16, "two 256-bit FMA units, which every AVX2 core since Haswell and Zen 2 has"
	case c.Kernel != "avx512f":
		return 0, "the portable kernel has no vector peak"
	case c.Vendor == "AuthenticAMD" && c.Family == 25:
		return 16, "Zen 4 runs an AVX-512 FMA on its two 256-bit FMA pipes"
	case c.Vendor == "AuthenticAMD":
		return 32, "assumed: two 512-bit FMA pipes, as Zen 5 has"
	}
	return 32, "assumed: two 512-bit FMA units, as Xeon Scalable Gold and Platinum have; " +
		"16 on a part with one"
}

// shapeReport gathers one engine shape's measurements, a value per round.
type shapeReport struct {
	suite.EngineShape
	kernel, twin, peer []float64 // samples per CPU second
	// wall1 and wall2 are the one- and two-thread twin's wall time per
	// sample, cpu2 the two-thread twin's process CPU time per sample, in ns,
	// as the gate's probe times them.
	wall1, wall2, cpu2 []float64
	peerRanOn          string
	one, two           []gpuengine.CPUPhases
}

// phaseTime reads the time of one phase from a profiled bake.
type phaseTime = func(gpuengine.CPUPhases) time.Duration

func (r *shapeReport) spec() bakeapi.Spec {
	return bakeapi.Spec{
		Width:    r.Width,
		Depth:    r.Depth,
		NSamples: r.Samples,
		Sampler:  bakeapi.SamplerPhilox,
	}
}

// flopsPerSample is the forward pass's work: 2·W²·D.
func (r *shapeReport) flopsPerSample() float64 {
	return 2 * float64(r.Width) * float64(r.Width) * float64(r.Depth)
}

// measure runs one round of the kernel alone, the twin as the gate's probe
// times it on one and two threads, and the twin profiled by phase.
func (r *shapeReport) measure(ctx context.Context) error {
	flops, err := gpuengine.KernelRate(r.Width, gpuengine.PhiloxBlockRows, 500*time.Millisecond)
	if err != nil {
		return err
	}
	r.kernel = append(r.kernel, flops/r.flopsPerSample())

	runtime.GC()
	rep, err := suite.Probe(ctx, r.spec(), suite.ProbeOptions{Threads: 1})
	if err != nil {
		return err
	}
	r.twin = append(r.twin, float64(rep.Samples)/rep.CPUSeconds)
	r.wall1 = append(r.wall1, rep.Seconds/float64(rep.Samples)*1e9)
	runtime.GC()
	if rep, err = suite.Probe(ctx, r.spec(), suite.ProbeOptions{Threads: 2}); err != nil {
		return err
	}
	r.cpu2 = append(r.cpu2, rep.CPUSeconds/float64(rep.Samples)*1e9)
	r.wall2 = append(r.wall2, rep.Seconds/float64(rep.Samples)*1e9)

	job, err := gpuengine.JobForSeed(r.spec(), 42)
	if err != nil {
		return err
	}
	for _, threads := range []int{1, 2} {
		job.Threads = threads
		runtime.GC()
		_, p, err := gpuengine.ProfilePhilox(ctx, r.spec(), job)
		if err != nil {
			return err
		}
		if threads == 1 {
			r.one = append(r.one, p)
		} else {
			r.two = append(r.two, p)
		}
	}
	return nil
}

// write prints the shape's three tables: speeds, phases, two threads.
func (r *shapeReport) write(w io.Writer, peak float64) {
	gflops := func(samples float64) float64 { return samples * r.flopsPerSample() / 1e9 }
	share := func(samples float64) string {
		if peak <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f %%", 100*gflops(samples)/peak)
	}
	med := func(v []float64) float64 { return gate.Metric{Values: v}.Median() }
	kernel := med(r.kernel)
	fmt.Fprintf(w, "\nW=%d D=%d, one thread, samples per CPU second "+
		"(median; min–max of %d rounds); GFLOP/s count 2·W²·D a sample\n\n",
		r.Width, r.Depth, len(r.kernel))
	fmt.Fprintf(w, "| implementation | samples per CPU s | GFLOP/s | share of 1-core peak "+
		"| of the kernel's speed | vs numpy peer (%s) |\n", r.peerRanOn)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	ratios := func(v []float64) string {
		var q []float64
		for i := range v {
			q = append(q, v[i]/r.peer[i])
		}
		return spread(q, "%.2f") + "×"
	}
	row := func(name string, v []float64) {
		fmt.Fprintf(w, "| %s | %s | %.1f | %s | %.0f %% | %s |\n",
			name, spread(v, "%.0f"), gflops(med(v)), share(med(v)), 100*med(v)/kernel, ratios(v))
	}
	row(fmt.Sprintf("forward kernel alone (%d rows a call)", gpuengine.PhiloxBlockRows), r.kernel)
	row("philox twin", r.twin)
	row("numpy peer (whestbench create_dataset, 1 thread)", r.peer)

	perSample := func(ps []gpuengine.CPUPhases, f phaseTime) []float64 {
		var out []float64
		for _, p := range ps {
			out = append(out, float64(f(p).Nanoseconds())/float64(p.Samples))
		}
		return out
	}
	worker := func(f func(gpuengine.WorkerPhases) time.Duration) phaseTime {
		return func(p gpuengine.CPUPhases) time.Duration { return f(p.Workers[0]) }
	}
	total := perSample(r.one, func(p gpuengine.CPUPhases) time.Duration { return p.Process })
	fmt.Fprintf(w, "\nW=%d D=%d, the twin by phase, one thread (ProfilePhilox), "+
		"CPU ns per sample\n\n", r.Width, r.Depth)
	fmt.Fprintln(w, "| phase | ns per sample | share |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, ph := range []struct {
		name  string
		spent phaseTime
	}{
		{"sampling (Philox, Box–Muller)",
			worker(func(x gpuengine.WorkerPhases) time.Duration { return x.Sampling })},
		{"forward kernel",
			worker(func(x gpuengine.WorkerPhases) time.Duration { return x.Forward })},
		{"tile column sums and squares (float64)",
			worker(func(x gpuengine.WorkerPhases) time.Duration { return x.Sums })},
		{"fixed-point accumulation",
			worker(func(x gpuengine.WorkerPhases) time.Duration { return x.Exact })},
		{"other in the worker (loop, clock reads)", worker(gpuengine.WorkerPhases.Other)},
		{"outside the worker (step loop, checkpoints, runtime)", gpuengine.CPUPhases.Outside},
	} {
		v := perSample(r.one, ph.spent)
		fmt.Fprintf(w, "| %s | %s | %.1f %% |\n", ph.name, spread(v, "%.1f"), 100*med(v)/med(total))
	}
	fmt.Fprintf(w, "| total, profiled | %s | 100 %% |\n", spread(total, "%.1f"))
	fmt.Fprintf(w, "| total, unprofiled (the twin's row above) | %.1f | |\n", 1e9/med(r.twin))
	fmt.Fprintf(w, "| forward kernel alone, same rows | %.1f | |\n", 1e9/kernel)

	// Two threads. The probe's process CPU time says what two threads cost
	// in all; the profiled run says how the work split between them. It
	// locks each worker to its OS thread, which costs the runtime CPU time of
	// its own when they are preempted, so its totals are not the ones to
	// read. With a core per thread the bake would take the total over two,
	// stretched by the imbalance.
	var speedup, wall []float64
	for i, cpu2 := range r.cpu2 {
		ws := r.two[i].Workers
		slowest := slices.MaxFunc(ws, func(a, b gpuengine.WorkerPhases) int {
			return cmp.Compare(a.CPU, b.CPU)
		}).CPU
		imbalance := float64(slowest) / (float64(ws[0].CPU+ws[1].CPU) / 2)
		speedup = append(speedup, 2*(1e9/r.twin[i])/(cpu2*imbalance))
		wall = append(wall, r.wall1[i]/r.wall2[i])
	}
	fmt.Fprintf(w, "\nW=%d D=%d, two threads, CPU ns per sample of the bake\n\n", r.Width, r.Depth)
	fmt.Fprintln(w, "| | ns per sample |")
	fmt.Fprintln(w, "|---|---:|")
	fmt.Fprintf(w, "| one thread: process (the twin's row above) | %s |\n",
		spread(invert(r.twin), "%.1f"))
	fmt.Fprintf(w, "| two threads: process (the probe, --threads 2) | %s |\n",
		spread(r.cpu2, "%.1f"))
	for k := range 2 {
		cpu := perSample(r.two, func(p gpuengine.CPUPhases) time.Duration {
			return p.Workers[k].CPU
		})
		fmt.Fprintf(w, "| two threads, profiled: worker %d | %s |\n", k+1, spread(cpu, "%.1f"))
	}
	fmt.Fprintf(w, "\nspeed-up with a core per thread "+
		"(2 × one thread's CPU time over two threads', stretched by the workers' imbalance): %s×; "+
		"wall-clock speed-up, which neighbours move: %s×\n",
		spread(speedup, "%.2f"), spread(wall, "%.2f"))
}

// invert turns rates into times per unit, in nanoseconds.
func invert(rates []float64) []float64 {
	var out []float64
	for _, r := range rates {
		out = append(out, 1e9/r)
	}
	return out
}

// spread prints the median of v and, with more than one value, its range.
func spread(v []float64, format string) string {
	m := fmt.Sprintf(format, gate.Metric{Values: v}.Median())
	if len(v) < 2 {
		return m
	}
	return fmt.Sprintf("%s ("+format+"–"+format+")", m, slices.Min(v), slices.Max(v))
}
