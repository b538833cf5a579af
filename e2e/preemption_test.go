package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestPreemptedSliceCompletes is a spot fleet: the GPU worker running the
// bake's one long slice is stopped gracefully (SIGTERM, as a preemption
// notice does) three times as often as policy.slice-max-attempts allows
// attempts, each time after the MLP has moved on, and a new worker takes its
// place. The bake completes, bit-identical to a local bake; every stop
// handed the slice back as a fresh first attempt, and status counts them.
func TestPreemptedSliceCompletes(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	gpu := s.startWorker("gpu")
	// One MLP of tens of seconds on one thread, checkpointed every 200 ms.
	b := bakeSpec{
		ID:          "preempt",
		Width:       32,
		Depth:       3,
		NSamples:    60_000_000,
		SliceSize:   1,
		MaxInFlight: 1,
		Tag:         "preempt",
		Splits:      []splitSpec{{"public", "default", 1, 31}},
	}
	const maxAttempts, stops = 2, 6
	cfg := s.bakeConfigMap(b)
	pol := maps.Clone(policy)
	pol["slice-max-attempts"] = maxAttempts
	cfg["policy"] = pol
	cfgFile := s.writeConfig("bake-"+b.ID, cfg)
	s.mustWhestbake("bake", "--config-file", cfgFile, "--id", b.ID)

	ctx := context.Background()
	bk := keys.Bake(b.ID)
	samples := func() int64 {
		data, err := s.art.Get(ctx, bk.MLPCheckpoint("public", 0))
		if err != nil {
			return 0
		}
		var cp gpuengine.Checkpoint
		if err := json.Unmarshal(data, &cp); err != nil {
			t.Fatalf("checkpoint of MLP 0: %v", err)
		}
		return cp.SamplesDone
	}
	var last int64
	for i := range stops {
		waitFor(t, 2*time.Minute, "the MLP to move past the last stop", func() bool {
			d, err := s.tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(b.ID), "")
			if err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
				status := s.whestbake(nil, "status", b.ID, "--config-file", cfgFile)
				t.Fatalf("the bake ended after %d stops:\n%s", i, status.stdout)
			}
			return samples() > last
		})
		gpu.stop(syscall.SIGTERM, time.Minute)
		code := gpu.cmd.ProcessState.ExitCode()
		if code != 0 || !strings.Contains(gpu.output(), "stopping") {
			t.Fatalf("stop %d: the worker did not stop gracefully (exit %d):\n%s",
				i+1, code, gpu.output())
		}
		// A planned stop is no error: log alerts must not fire on a roll-out.
		if !strings.Contains(gpu.output(), "level=WARN msg=\"slice handed back") ||
			strings.Contains(gpu.output(), "level=ERROR") {
			t.Errorf("stop %d: the hand-back is not one WARN line, or an ERROR was logged:\n%s",
				i+1, gpu.output())
		}
		if ok, _ := s.art.Exists(ctx, bk.MLPResult("public", 0)); ok {
			t.Fatalf("the MLP finished after %d of %d stops: make it slower", i+1, stops)
		}
		last = samples()
		gpu = s.startWorker("gpu")
	}
	s.watch(cfgFile, b.ID)

	wid := bakeapi.SplitWorkflowID(b.ID, "public")
	stopped, started := 0, 0
	slices := map[int64]bool{} // scheduled event IDs of BakeSlice activities
	for _, e := range s.history(wid, "").Events {
		scheduled := e.GetActivityTaskScheduledEventAttributes()
		if scheduled != nil && scheduled.GetActivityType().GetName() == bakeapi.BakeSliceActivity {
			slices[e.GetEventId()] = true
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil &&
			slices[a.GetScheduledEventId()] {
			started++
			if a.GetAttempt() != 1 {
				t.Errorf("a slice ran as attempt %d: a stop was retried as a failure",
					a.GetAttempt())
			}
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			kind := a.GetFailure().GetApplicationFailureInfo().GetType()
			if kind == bakeapi.ErrWorkerStopping {
				stopped++
			} else {
				t.Errorf("a slice failed with %s: %s", kind, a.GetFailure().GetMessage())
			}
		}
	}
	if stopped != stops || started != stops+1 {
		t.Errorf("the split's history holds %d stops and %d started slices, want %d stops and %d",
			stopped, started, stops, stops+1)
	}
	runs := s.sliceRuns(wid)
	if len(runs) != 1 || runs[0].Out.Resumed != 1 {
		t.Errorf("completed slices %+v, want one that resumed its MLP from a checkpoint", runs)
	}

	st := s.mustWhestbake("status", b.ID, "--config-file", cfgFile)
	// SPLIT STAGE MLPS SLICES COMPUTED RESUMED REUSED STOPS ETA
	var row []string
	for _, line := range strings.Split(st.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 9 && f[0] == "public" {
			row = f
		}
	}
	if row == nil || row[1] != "done" || row[5] != "1" || row[7] != fmt.Sprint(stops) {
		t.Errorf("status should show split public done, its MLP resumed and %d stops:\n%s",
			stops, st.stdout)
	}
	datasettest.SameDataset(t, s.download(b), s.localBake(b))
}
