package workflows_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// stopError is what BakeSlice returns when its worker shuts down: a
// retryable WorkerStopping with the attempt and whether it saved progress.
func stopError(ctx context.Context, saved bool) error {
	return temporal.NewApplicationErrorWithOptions(
		"worker is shutting down; the slice is handed back",
		bakeapi.ErrWorkerStopping,
		temporal.ApplicationErrorOptions{NextRetryDelay: time.Second,
			Details: []any{
				bakeapi.SliceStop{Attempt: activity.GetInfo(ctx).Attempt, Saved: saved},
			}},
	)
}

// TestGracefulStopsSpendNoAttempts: a long slice on a preemptible fleet,
// stopped ten times (more than three times policy.slice-max-attempts), each
// stop after saving a checkpoint, completes the bake; every stop is a new
// activity started at once, as attempt 1.
func TestGracefulStopsSpendNoAttempts(t *testing.T) {
	env := newEnv()
	var tries attempts
	const stops = 10
	in := oneSplitBake(
		env,
		"preempted",
		func(ctx context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			if in.Slice == 2 {
				if a := activity.GetInfo(ctx).Attempt; a != 1 {
					t.Errorf("slice 2 ran as attempt %d: a stop was retried by Temporal", a)
				}
				if tries.add(in.Slice) <= stops {
					return bakeapi.BakeSliceOutput{}, stopError(ctx, true)
				}
			}
			return fakeSlice(in), nil
		},
	)
	if stops <= 3*in.Policy.SliceMaxAttempts {
		t.Fatalf(
			"the test stops the slice %d times, not well above its %d attempts",
			stops,
			in.Policy.SliceMaxAttempts,
		)
	}
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("bake failed after %d graceful stops that each saved progress: %v", stops, err)
	}
	if got := tries.get(2); got != stops+1 {
		t.Errorf("slice 2 ran %d times, want %d stops and the run that finished it", got, stops+1)
	}
}

// TestStopsWithoutProgressAreBounded: a slice whose every stop saves
// nothing (workers that go away before any checkpoint) fails after
// policy.slice-max-attempts stops, with a WorkerStopping error that says
// so and does not claim the slice resumes elsewhere; a failed attempt
// before a stop counts too.
func TestStopsWithoutProgressAreBounded(t *testing.T) {
	unsaved := func(ctx context.Context) error { return stopError(ctx, false) }
	for _, c := range []struct {
		name      string
		failFirst bool // the first run fails otherwise, and its retry is stopped
		stop      func(context.Context) error
	}{
		{"stops only", false, unsaved},
		// Three attempts spent: a failure and a stop, then a stop.
		{"failure then stops", true, unsaved},
		// A GPU worker from before SliceStop: its stops are not lost (the
		// split does not fail at the first), and each costs an attempt.
		{"stops of an older worker", false, func(context.Context) error {
			return temporal.NewApplicationErrorWithOptions(
				"worker is shutting down; "+
					"the slice resumes from its checkpoints on another worker",
				bakeapi.ErrWorkerStopping,
				temporal.ApplicationErrorOptions{NextRetryDelay: time.Second},
			)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv()
			var tries attempts
			in := oneSplitBake(
				env,
				"idle",
				func(
					ctx context.Context,
					in bakeapi.BakeSliceInput,
				) (bakeapi.BakeSliceOutput, error) {
					if in.Slice != 2 {
						return fakeSlice(in), nil
					}
					if tries.add(in.Slice) == 1 && c.failFirst {
						return bakeapi.BakeSliceOutput{}, errors.New("connection reset by peer")
					}
					return bakeapi.BakeSliceOutput{}, c.stop(ctx)
				},
			)
			env.ExecuteWorkflow(workflows.BakeWorkflow, in)
			err := env.GetWorkflowError()
			if err == nil {
				t.Fatal("bake succeeded with a slice that never progressed")
			}
			if got := tries.get(2); got != int(in.Policy.SliceMaxAttempts) {
				t.Errorf(
					"slice 2 ran %d times, want %d (policy.slice-max-attempts)",
					got,
					in.Policy.SliceMaxAttempts,
				)
			}
			if types := appErrorTypes(err); len(types) == 0 ||
				types[len(types)-1] != bakeapi.ErrWorkerStopping {
				t.Errorf("error types %v, want %s at the root", types, bakeapi.ErrWorkerStopping)
			}
			for _, part := range []string{
				"slice 2",
				"split public",
				"policy.slice-max-attempts",
				"saved no progress",
			} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
			if strings.Contains(err.Error(), "handed back") {
				t.Errorf(
					"error %q repeats the last stop's message, which is not how the slice ended",
					err,
				)
			}
		})
	}
}

// TestStoppedSlicesCrossRuns: slices handed back when a run's history is
// full go to the next run in its cursor, with what they spent, and are
// started there first; the progress query does not count them as done.
func TestStoppedSlicesCrossRuns(t *testing.T) {
	defer workflows.SetRunEventBudget(workflows.RunStartEvents + 4*workflows.SliceEvents)()
	env := newEnv()
	in := splitInput("cross", 8, 1, 2)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(ctx context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			if in.Slice >= 2 {
				return bakeapi.BakeSliceOutput{}, stopError(ctx, in.Slice != 3)
			}
			return fakeSlice(in), nil
		})
	env.ExecuteWorkflow(workflows.SplitWorkflow, in)
	next := continued(t, env.GetWorkflowError())
	c := next.Cursor
	// Four starts fit the run: 0 and 1 finish, 2 and 3 are stopped and handed back.
	got := map[int]bakeapi.StoppedSlice{}
	for _, st := range c.Stopped {
		got[st.Slice] = st
	}
	if c.Next != 4 || len(c.Stopped) != 2 || got[2] != (bakeapi.StoppedSlice{Slice: 2, Stops: 1}) ||
		got[3] != (bakeapi.StoppedSlice{Slice: 3, Spent: 1, Stops: 1}) {
		t.Fatalf(
			"cursor %+v, want next 4 with slices 2 (no attempt spent) and 3 (one spent: "+
				"it saved nothing) handed back",
			c,
		)
	}

	env = newEnv()
	var w windowCounter
	w.listen(env)
	var mu sync.Mutex
	var first []int // slices started while nothing had finished
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(ctx context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			mu.Lock()
			if len(first) < 2 {
				first = append(first, in.Slice)
			}
			mu.Unlock()
			if in.Slice == 3 && activity.GetInfo(ctx).Attempt == 1 {
				return bakeapi.BakeSliceOutput{}, errors.New("connection reset by peer")
			}
			return fakeSlice(in), nil
		})
	var mid bakeapi.SplitProgress
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
		if err == nil {
			err = v.Get(&mid)
		}
		if err != nil {
			t.Error(err)
		}
	}, time.Second)
	env.ExecuteWorkflow(workflows.SplitWorkflow, *next)
	next = continued(t, env.GetWorkflowError())
	if mid.SlicesDone != 2 || mid.MLPsDone != 2 {
		t.Errorf("second run's progress %+v, want 2 slices and MLPs done (2 and 3 are not)", mid)
	}
	slices.Sort(first)
	if !slices.Equal(first, []int{2, 3}) || len(w.ranges) != 4 {
		t.Errorf(
			"second run started %v first and %d slices in all, "+
				"want the handed-back slices 2 and 3 first, then 4 and 5",
			first,
			len(w.ranges),
		)
	}
	if c := next.Cursor; c == nil || len(c.Stopped) != 0 {
		t.Errorf("second run's cursor %+v, want nothing handed back", c)
	}
}

// continued is the next run's input of a run that ended with err.
func continued(t *testing.T, err error) *bakeapi.SplitInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("the run ended with %v, want a continue-as-new", err)
	}
	next := new(bakeapi.SplitInput)
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, next); err != nil {
		t.Fatal(err)
	}
	return next
}
