package gpuengine

import (
	"context"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

// Profiling a bake changes no bit of it, and accounts for its CPU time: one
// worker per thread, every phase measured, the phases within the worker's
// time and the workers within the process's.
func TestProfilePhiloxIsTheBakeWithItsPhases(t *testing.T) {
	spec := bakeapi.Spec{
		Width:     48,
		Depth:     3,
		NSamples:  5*PhiloxBlockRows + 7,
		Sampler:   bakeapi.SamplerPhilox,
		ChunkSize: 2 * PhiloxBlockRows,
	}
	for _, threads := range []int{1, 2} {
		j := job(t, 31, spec.Width, spec.Depth)
		j.Threads = threads
		res, p, err := ProfilePhilox(context.Background(), spec, j)
		if err != nil {
			t.Fatal(err)
		}
		if !sameResult(res, bake(t, spec, j)) {
			t.Fatalf("%d threads: the profiled bake's result differs from the bake's", threads)
		}
		if len(p.Workers) != threads || p.Samples != spec.NSamples || p.Wall <= 0 {
			t.Fatalf(
				"%d threads: %d workers, %d samples, wall %v",
				threads,
				len(p.Workers),
				p.Samples,
				p.Wall,
			)
		}
		var workers int64
		for i, w := range p.Workers {
			if w.Sampling <= 0 || w.Forward <= 0 || w.Sums <= 0 || w.Exact <= 0 {
				t.Errorf("worker %d: a phase without time: %+v", i, w)
			}
			if sum := w.Sampling + w.Forward + w.Sums + w.Exact; sum > w.CPU+w.CPU/100 {
				t.Errorf("worker %d: phases add up to %v, more than its CPU time %v", i, sum, w.CPU)
			}
			workers += int64(w.CPU)
		}
		if p.Process <= 0 || float64(workers) > 1.01*float64(p.Process) {
			t.Errorf("workers' CPU %v above the process's %v", workers, p.Process)
		}
	}
}

func TestProfilePhiloxRefusesTheNumpySampler(t *testing.T) {
	spec := bakeapi.Spec{
		Width:    8,
		Depth:    1,
		NSamples: 100,
		Sampler:  bakeapi.SamplerNumpy,
		Dot:      bakeapi.DotFMA,
	}
	if _, _, err := ProfilePhilox(context.Background(), spec, job(t, 1, 8, 1)); err == nil {
		t.Fatal("profiled the numpy sampler")
	}
}

func TestKernelRateCountsFlopsPerCPUSecond(t *testing.T) {
	r, err := KernelRate(32, PhiloxBlockRows, 20e6)
	if err != nil || r <= 0 {
		t.Fatalf("KernelRate = %v, %v", r, err)
	}
	if _, err := KernelRate(0, 1, 1); err == nil {
		t.Fatal("width 0 accepted")
	}
}
