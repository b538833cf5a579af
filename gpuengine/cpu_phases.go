package gpuengine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cpukernel"
	"github.com/whestbake/whestbake/internal/cputime"
)

// CPUPhases is where a bake on the philox CPU twin spends its CPU time,
// as ProfilePhilox measures it.
type CPUPhases struct {
	Samples int64
	Wall    time.Duration
	// Process is the CPU time of the whole process during the bake: the
	// workers, the step loop between them that merges their exact sums and
	// builds checkpoints, and the Go runtime, its collector included.
	Process time.Duration
	// Workers holds each worker thread's CPU time, by phase.
	Workers []WorkerPhases
}

// WorkerPhases is one worker thread's CPU time inside its tile ranges, split
// into the phases of the philox loop that docs/benchmarks.md names.
type WorkerPhases struct {
	CPU time.Duration
	// Sampling is Philox and Box–Muller for the inputs, Forward the forward
	// kernel, Sums the float64 tile column sums and squares, Exact their
	// fixed-point accumulation.
	Sampling, Forward, Sums, Exact time.Duration
}

// Other is the worker's CPU time outside the four phases: the loop itself,
// the phase clock's own reads.
func (w WorkerPhases) Other() time.Duration {
	return max(0, w.CPU-w.Sampling-w.Forward-w.Sums-w.Exact)
}

// Outside is the process's CPU time outside the workers' tile ranges.
func (p CPUPhases) Outside() time.Duration {
	out := p.Process
	for _, w := range p.Workers {
		out -= w.CPU
	}
	return max(0, out)
}

// ProfilePhilox bakes one MLP of spec with the philox sampler on the CPU twin
// with job.Threads workers and reports where the CPU time went. The result
// is the bake's, bit for bit; the phase clock costs a few percent of the
// time at small widths: two reads of the thread's CPU clock and a dozen of
// the monotonic clock per block of PhiloxBlockRows samples.
func ProfilePhilox(ctx context.Context, spec bakeapi.Spec, job Job) (Result, CPUPhases, error) {
	if spec.Sampler != bakeapi.SamplerPhilox {
		return Result{}, CPUPhases{}, fmt.Errorf(
			"ProfilePhilox profiles the philox sampler, not %q",
			spec.Sampler,
		)
	}
	if _, ok := cputime.Thread(); !ok {
		return Result{}, CPUPhases{}, errNoThreadClock
	}
	if err := checkJob(spec, job); err != nil {
		return Result{}, CPUPhases{}, err
	}
	clocks := make([]*workerClock, max(1, job.Threads))
	for i := range clocks {
		clocks[i] = &workerClock{}
	}
	cpu0, start := cputime.Process(), time.Now()
	res, err := bakePhilox(ctx, spec, job, nil, nil, clocks)
	if err != nil {
		return Result{}, CPUPhases{}, err
	}
	p := CPUPhases{
		Samples: spec.NSamples,
		Wall:    time.Since(start),
		Process: cputime.Process() - cpu0,
	}
	for _, c := range clocks {
		p.Workers = append(p.Workers, c.total)
	}
	return res, p, nil
}

var errNoThreadClock = errors.New(
	"CPU profiling needs a thread CPU clock, which this OS does not offer (Linux and macOS do)",
)

// workerPhase is one of the phases a workerClock tells apart.
type workerPhase int

const (
	workerSampling workerPhase = iota
	workerForward
	workerSums
	workerExact
	numWorkerPhases
)

// workerClock splits a worker thread's CPU time into phases. A read of the
// thread's CPU clock is a system call, about 0.6 µs on the KVM build VM,
// too slow to bracket every phase of a block at small widths, so each phase
// is timed on the monotonic clock and a block's phase times are scaled to
// the thread CPU time the whole block took: a block in which the thread was
// descheduled has its phases shrunk in proportion. All methods do nothing on
// a nil clock, which is what a bake that is not profiled carries.
type workerClock struct {
	cpu0     time.Duration
	mono0    time.Time // the block's start on the monotonic clock
	lastMark time.Time // when the phase now running began
	block    [numWorkerPhases]time.Duration
	total    WorkerPhases
}

// lockThread keeps the calling goroutine on its OS thread, whose CPU clock
// the phases read, and returns the function that lets it go.
func (c *workerClock) lockThread() func() {
	if c == nil {
		return func() {}
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

func (c *workerClock) startBlock() {
	if c == nil {
		return
	}
	c.cpu0, _ = cputime.Thread()
	c.mono0 = time.Now()
	c.lastMark = c.mono0
}

// mark ends phase p: the time since the previous mark is p's.
func (c *workerClock) mark(p workerPhase) {
	if c == nil {
		return
	}
	now := time.Now()
	c.block[p] += now.Sub(c.lastMark)
	c.lastMark = now
}

func (c *workerClock) endBlock() {
	if c == nil {
		return
	}
	cpu1, _ := cputime.Thread()
	cpu, mono := cpu1-c.cpu0, time.Since(c.mono0)
	scale := 1.0
	if mono > 0 {
		scale = float64(cpu) / float64(mono)
	}
	at := func(p workerPhase) time.Duration { return time.Duration(float64(c.block[p]) * scale) }
	c.total.CPU += cpu
	c.total.Sampling += at(workerSampling)
	c.total.Forward += at(workerForward)
	c.total.Sums += at(workerSums)
	c.total.Exact += at(workerExact)
	c.block = [numWorkerPhases]time.Duration{}
}

// KernelRate times the forward kernel alone on one thread: calls of
// relu(x @ W) on rows random rows of width inputs through one random
// width×width layer in FMA mode, until it has used at least minCPU of the
// thread's CPU time. It returns the floating-point operations, 2·rows·width²
// a call, per CPU second.
func KernelRate(width, rows int, minCPU time.Duration) (float64, error) {
	if width < 1 || rows < 1 {
		return 0, fmt.Errorf("KernelRate: width %d and rows %d must be positive", width, rows)
	}
	if _, ok := cputime.Thread(); !ok {
		return 0, errNoThreadClock
	}
	rng := rand.New(rand.NewPCG(1, 2))
	normals := func(n int, scale float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		return x
	}
	src, w := normals(rows*width, 1), normals(width*width, 1/float64(width))
	dst := make([]float32, rows*width)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpukernel.Forward(dst, src, rows, width, w, cpukernel.FMA) // warm the caches
	// The clock is read once per batch of calls, doubled until a batch takes
	// a millisecond, so that its reads cost nothing measurable.
	calls, batch, cpu0 := 0, 1, mustThreadCPU()
	for {
		t0 := mustThreadCPU()
		for range batch {
			cpukernel.Forward(dst, src, rows, width, w, cpukernel.FMA)
		}
		calls += batch
		now := mustThreadCPU()
		if now-cpu0 >= minCPU {
			flops := 2 * float64(rows) * float64(width) * float64(width) * float64(calls)
			return flops / (now - cpu0).Seconds(), nil
		}
		if now-t0 < time.Millisecond {
			batch *= 2
		}
	}
}

func mustThreadCPU() time.Duration {
	t, _ := cputime.Thread()
	return t
}
