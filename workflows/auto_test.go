package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// TestAutoInFlightFollowsTheGPUWorkers: with max-in-flight auto, a split's
// window is the count of GPU workers: 2 at the start; 5 from the third count
// on, which a timer brings a minute later, before any 10-minute slice
// finishes; and it never shrinks within a run when the count drops (busy
// workers stop polling) or fails.
func TestAutoInFlightFollowsTheGPUWorkers(t *testing.T) {
	env := newEnv()
	var w windowCounter
	w.listen(env)
	var mu sync.Mutex
	counts := []int{2, 2, 5, 1}
	var asked []string
	env.OnActivity(acts.GPUWorkers, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in bakeapi.GPUWorkersInput) (bakeapi.GPUWorkersOutput, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, in.Queue)
			if len(asked) > len(counts) {
				return bakeapi.GPUWorkersOutput{}, errors.New("frontend unavailable")
			}
			return bakeapi.GPUWorkersOutput{Workers: counts[len(asked)-1]}, nil
		})
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	in := splitInput("auto", 30, 1, 0)
	in.GPUQueue = "bake-gpu-a"
	env.ExecuteWorkflow(workflows.SplitWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if w.peak != 5 || w.started != 30 {
		t.Errorf(
			"peak in flight %d over %d slices, want 5 (the largest count) over 30",
			w.peak,
			w.started,
		)
	}
	if len(asked) < len(counts)+1 || asked[0] != "bake-gpu-a" {
		t.Errorf(
			"GPU workers counted %d times on %v: want a count at the start and one a minute "+
				"while slices wait, on the bake's GPU queue",
			len(asked),
			asked,
		)
	}
	v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
	var p bakeapi.SplitProgress
	if err == nil {
		err = v.Get(&p)
	}
	if err != nil || p.MaxInFlight != 5 {
		t.Errorf("progress %+v (%v): want the window of 5 reported", p, err)
	}
}
