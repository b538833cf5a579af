package workflows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// runSplit runs one SplitWorkflow run from in, started at start, and returns
// the slices it started, its window's peak, the next run's input if it
// continued as new, and its output if it completed. during, when not nil,
// runs on the workflow clock a minute into the run.
func runSplit(
	t *testing.T,
	in bakeapi.SplitInput,
	start time.Time,
	historyLength int,
	during func(query func() bakeapi.SplitProgress),
) (started []int, peak int, next *bakeapi.SplitInput, out *bakeapi.SplitOutput) {
	t.Helper()
	env := newEnv()
	env.SetStartTime(start)
	env.SetCurrentHistoryLength(historyLength)
	var w windowCounter
	w.listen(env)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	if during != nil {
		env.RegisterDelayedCallback(func() {
			during(func() bakeapi.SplitProgress {
				v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
				var p bakeapi.SplitProgress
				if err == nil {
					err = v.Get(&p)
				}
				if err != nil {
					t.Fatal(err)
				}
				return p
			})
		}, time.Minute)
	}
	env.ExecuteWorkflow(workflows.SplitWorkflow, in)
	for k := range w.ranges {
		started = append(started, k)
	}
	slices.Sort(started)
	if w.running != 0 {
		t.Errorf(
			"the run ended with %d slices still running: their results would be lost",
			w.running,
		)
	}
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	switch {
	case errors.As(err, &can):
		if can.WorkflowType.Name != bakeapi.SplitWorkflowName {
			t.Fatalf("continued as %s, want %s", can.WorkflowType.Name, bakeapi.SplitWorkflowName)
		}
		next = new(bakeapi.SplitInput)
		if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, next); err != nil {
			t.Fatal(err)
		}
	case err != nil:
		t.Fatal(err)
	default:
		out = new(bakeapi.SplitOutput)
		if err := env.GetWorkflowResult(out); err != nil {
			t.Fatal(err)
		}
	}
	return started, w.peak, next, out
}

// TestSplitContinuesAsNew: with room for 10 slices per run, a split of 25
// one-MLP slices runs as three runs of 10, 10 and 5 slices, each slice once,
// the window never exceeded; the cursor carries the count of committed
// slices and the split's start, never a list; the last run completes with
// all 25.
func TestSplitContinuesAsNew(t *testing.T) {
	defer workflows.SetRunEventBudget(workflows.RunStartEvents + 10*workflows.SliceEvents)()
	const n, window = 25, 3
	in := splitInput("can", n, 1, window)
	first := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var completed *bakeapi.SplitOutput
	done := 0
	for run := 0; ; run++ {
		if run == 5 {
			t.Fatal("more than 5 runs for 25 slices at 10 per run")
		}
		var mid bakeapi.SplitProgress
		started, peak, next, out := runSplit(
			t,
			in,
			first.Add(time.Duration(run)*time.Hour),
			0,
			func(q func() bakeapi.SplitProgress) { mid = q() },
		)
		want := []int{}
		for k := done; k < min(done+10, n); k++ {
			want = append(want, k)
		}
		if !slices.Equal(started, want) {
			t.Fatalf("run %d started slices %v, want %v", run, started, want)
		}
		if peak > window {
			t.Errorf("run %d: %d slices in flight, max-in-flight is %d", run, peak, window)
		}
		if mid.SlicesDone != done || mid.MLPsDone != done || mid.SlicesTotal != n ||
			!mid.StartedAt.Equal(first) {
			t.Errorf(
				"run %d progress a minute in: %+v, want %d/%d slices and MLPs done since %v",
				run,
				mid,
				done,
				n,
				first,
			)
		}
		done += len(started)
		if next == nil {
			completed = out
			break
		}
		if c := next.Cursor; c == nil || c.Next != done || c.Runs != run+1 ||
			!c.StartedAt.Equal(first) {
			t.Fatalf(
				"run %d continued with cursor %+v, want next slice %d after %d runs, started %v",
				run,
				c,
				done,
				run+1,
				first,
			)
		}
		if out != nil {
			t.Fatalf("run %d completed before the last slice", run)
		}
		in = *next
	}
	if done != n || completed == nil || completed.Slices != n || completed.NMLPs != n {
		t.Fatalf("%d slices baked, output %+v: want all %d", done, completed, n)
	}
}

// TestSplitRunHonoursTheServersHistoryLength: a run whose history the server
// already counts at the budget (say, workflow task retries after crashes)
// starts one slice, so every run still makes progress, and continues as new.
func TestSplitRunHonoursTheServersHistoryLength(t *testing.T) {
	in := splitInput("full", 3, 1, 3)
	started, _, next, _ := runSplit(t, in, time.Now(), workflows.RunEventBudget(), nil)
	if !slices.Equal(started, []int{0}) || next == nil || next.Cursor.Next != 1 {
		t.Fatalf(
			"started %v, continued with %+v: want slice 0 alone, then a run from slice 1",
			started,
			next,
		)
	}
}

// TestMergedSplitRunsNoSlices: a restarted bake whose split was merged before
// (GenerateSeeds says so) completes at once, with all its slices counted:
// the merge beside it finds the merged split.
func TestMergedSplitRunsNoSlices(t *testing.T) {
	in := splitInput("again", 4, 1, 2)
	in.Seeds.Merged = true
	started, _, next, out := runSplit(t, in, time.Now(), 0, nil)
	if len(started) != 0 || next != nil || out == nil || out.Slices != 4 {
		t.Fatalf(
			"started %v, continued %v, output %+v: want no slice and all 4 counted",
			started,
			next != nil,
			out,
		)
	}
}
