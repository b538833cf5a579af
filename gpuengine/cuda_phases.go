//go:build cuda

package gpuengine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
)

// Phases of the cuBLAS pipeline's device operations; phaseGap marks the start of an
// operation, so the time up to it, the GPU waiting for the host, is charged to none.
const (
	phaseGap = iota
	phaseRNG
	phaseGEMM
	phaseReduce
	phaseCopies
	nPhases
)

// phaseClock times the pipeline's operations with CUDA events on the default stream,
// which every launch, cuBLAS call and copy of the pipeline uses, so the events are
// ordered with them. Around each operation the runner calls mark(phaseGap) before
// enqueueing it and mark(phase) after: the GPU time between the two events is the
// operation's. If the GPU ran ahead and waited for the host, it reaches the first
// event only when the host records it, so the wait is outside both. Device thread only.
type phaseClock struct {
	events   []cu.Event       // pool, reused every step
	phase    []int            // phase of the interval that ends at events[i]
	recorded int              // events recorded this step
	total    [nPhases]float64 // milliseconds
}

func (c *phaseClock) mark(phase int) error {
	if c.recorded == len(c.events) {
		ev, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return fmt.Errorf("cuda: creating a timing event: %v", err)
		}
		c.events = append(c.events, ev)
		c.phase = append(c.phase, 0)
	}
	if err := c.events[c.recorded].Record(cu.NoStream); err != nil {
		return fmt.Errorf("cuda: recording a timing event: %v", err)
	}
	c.phase[c.recorded] = phase
	c.recorded++
	return nil
}

// collect adds up the recorded intervals once the device has passed every event, after
// readTotals' synchronisation, and empties the clock for the next step.
func (c *phaseClock) collect() error {
	// The last event was recorded after the read-back, possibly after the device got
	// there; Elapsed refuses an event the device has not passed.
	if c.recorded > 0 {
		if err := c.events[c.recorded-1].Synchronize(); err != nil {
			return fmt.Errorf("cuda: waiting for a timing event: %v", err)
		}
	}
	for i := 1; i < c.recorded; i++ {
		if c.phase[i] == phaseGap {
			continue
		}
		ms, err := c.events[i-1].Elapsed(c.events[i])
		if err != nil {
			return fmt.Errorf("cuda: reading a timing event: %v", err)
		}
		c.total[c.phase[i]] += ms
	}
	c.recorded = 0
	return nil
}

func (c *phaseClock) free() error {
	var errs []error
	for i := range c.events {
		if err := cu.DestroyEvent(&c.events[i]); err != nil {
			errs = append(errs, fmt.Errorf("cuda: destroying a timing event: %v", err))
		}
	}
	c.events = nil
	c.phase = nil
	c.recorded = 0
	return errors.Join(errs...)
}

// timed runs op between two marks, charging its GPU time to phase; with no clock it
// only runs op, so bakes pay one nil check per operation.
func (c *phaseClock) timed(phase int, op func() error) error {
	if c == nil {
		return op()
	}
	if err := c.mark(phaseGap); err != nil {
		return err
	}
	if err := op(); err != nil {
		return err
	}
	return c.mark(phase)
}

// CuBLASPhases bakes job on the cuBLAS path with every operation timed, one warm-up
// step first so that compilation and allocation are outside the wall time, and returns
// where the wall time went. Recording the events costs a few µs of host time per
// launch: compare Wall with an unprofiled run of the same bake before reading Idle.
func CuBLASPhases(ctx context.Context, spec bakeapi.Spec, job Job) (Phases, error) {
	eng, err := OpenCUDA(CUDAPathCuBLAS)
	if err != nil {
		return Phases{}, err
	}
	e := eng.(*cudaEngine)
	warm := spec
	warm.NSamples = min(spec.NSamples, cudakernel.Step(spec.ChunkSize))
	if _, err := e.BakeMLP(ctx, warm, job, nil, nil); err != nil {
		return Phases{}, errors.Join(err, e.Close())
	}
	clock := &phaseClock{}
	var runner *pipelineRunner
	e.dev.mu.Lock()
	err = e.dev.do(func() error {
		r, err := e.runner(spec.Width, spec.Depth, cudakernel.Step(spec.ChunkSize), spec.Precision)
		if err != nil {
			return err
		}
		runner = r.(*pipelineRunner)
		runner.clock = clock
		return nil
	})
	e.dev.mu.Unlock()
	if err != nil {
		return Phases{}, errors.Join(err, e.Close())
	}
	start := time.Now()
	_, err = e.BakeMLP(ctx, spec, job, nil, nil)
	wall := time.Since(start)
	e.dev.mu.Lock()
	freeErr := e.dev.do(func() error { runner.clock = nil; return clock.free() })
	e.dev.mu.Unlock()
	if err = errors.Join(err, freeErr, e.Close()); err != nil {
		return Phases{}, err
	}
	ms := func(p int) time.Duration {
		return time.Duration(clock.total[p] * float64(time.Millisecond))
	}
	return Phases{
		Wall:   wall,
		RNG:    ms(phaseRNG),
		GEMM:   ms(phaseGEMM),
		Reduce: ms(phaseReduce),
		Copies: ms(phaseCopies),
	}, nil
}
