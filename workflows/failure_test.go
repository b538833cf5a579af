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
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// attempts counts BakeSlice attempts per slice; activities run on their own
// goroutines, hence the lock.
type attempts struct {
	mu sync.Mutex
	n  map[int]int
}

func (a *attempts) add(slice int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[int]int{}
	}
	a.n[slice]++
	return a.n[slice]
}

func (a *attempts) get(slice int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[slice]
}

// oneSplitBake mocks every activity but BakeSlice, which the caller mocks
// (slice, when not nil, answers every BakeSlice).
func oneSplitBake(
	env *testsuite.TestWorkflowEnvironment,
	bakeID string,
	slice func(context.Context, bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error),
) bakeapi.BakeInput {
	in := twoSplitInput(bakeID)
	in.Splits = []bakeapi.SplitSpec{{
		Name:   "public",
		Config: "default",
		NMLPs:  6,
		Seed:   u64(3),
	}}
	in.SliceSize = 1
	in.Release = bakeapi.ReleaseSpec{
		Bucket: "releases",
		Prefix: "datasets",
		Name:   "t",
		Tag:    "v1",
	}
	env.RegisterWorkflow(workflows.SplitWorkflow)
	env.OnActivity(acts.GenerateSeeds, mock.Anything, mock.Anything).Return(seedsMock)
	if slice != nil {
		env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).Return(slice)
	}
	mockMergeAndCombine(env, in)
	pushed := bakeapi.PushOutput{URI: "s3://releases/datasets/t/v1/"}
	env.OnActivity(acts.Push, mock.Anything, mock.Anything).Return(pushed, nil)
	return in
}

// TestNonRetryableSliceErrorFailsBakeFast: an activity's non-retryable error
// is not retried, stops new slices from starting, skips merge/combine/push,
// and reaches the bake's caller with its type and message.
func TestNonRetryableSliceErrorFailsBakeFast(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		// The activity marks the error non-retryable itself.
		{
			"non-retryable error",
			temporal.NewNonRetryableApplicationError(
				"seeds file is not a JSON array",
				bakeapi.ErrInvalidSeeds,
				nil,
			),
		},
		// A plain application error of a listed type: the retry policy is the
		// second line of defence.
		{
			"listed error type",
			temporal.NewApplicationError("result of MLP 1 is garbage", bakeapi.ErrCorruptPartial),
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv()
			var tries attempts
			in := oneSplitBake(env, "bad", nil)
			// Slice 1 fails at once while slice 0 runs for sliceMinutes of workflow time.
			sliceOne := mock.MatchedBy(
				func(in bakeapi.BakeSliceInput) bool { return in.Slice == 1 },
			)
			env.OnActivity(acts.BakeSlice, mock.Anything, sliceOne).Return(
				func(
					_ context.Context,
					in bakeapi.BakeSliceInput,
				) (bakeapi.BakeSliceOutput, error) {
					tries.add(in.Slice)
					return bakeapi.BakeSliceOutput{}, c.err
				},
			)
			env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
				func(
					_ context.Context,
					in bakeapi.BakeSliceInput,
				) (bakeapi.BakeSliceOutput, error) {
					tries.add(in.Slice)
					return fakeSlice(in), nil
				},
			)
			start := env.Now()
			env.ExecuteWorkflow(workflows.BakeWorkflow, in)
			err := env.GetWorkflowError()
			if err == nil {
				t.Fatal("the bake succeeded; want the slice's error")
			}
			want := c.err.(*temporal.ApplicationError)
			if types := appErrorTypes(err); !slices.Contains(types, want.Type()) {
				t.Errorf("error types in the chain %v, want %q among them", types, want.Type())
			}
			for _, part := range []string{"split public", "slice 1", want.Message()} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
			if n := tries.get(1); n != 1 {
				t.Errorf("failing slice ran %d times, want 1 (no retry)", n)
			}
			for k := 2; k < 6; k++ {
				if tries.get(k) != 0 {
					t.Errorf("slice %d started after slice 1 failed", k)
				}
			}
			// It ends as soon as the slice already running drains: no back-off, no retry.
			if d := env.Now().Sub(start); d != sliceMinutes {
				t.Errorf(
					"the bake took %v of workflow time to fail, want %v (the running slice)",
					d,
					sliceMinutes,
				)
			}
			env.AssertNotCalled(t, "CombineSplits", mock.Anything, mock.Anything)
			env.AssertNotCalled(t, "Push", mock.Anything, mock.Anything)
		})
	}
}

// TestRetryableSliceErrorIsRetried: an ordinary failure is retried with the
// policy's back-off and the bake completes.
func TestRetryableSliceErrorIsRetried(t *testing.T) {
	env := newEnv()
	var tries attempts
	seen := map[int32]bool{}
	var mu sync.Mutex
	in := oneSplitBake(
		env,
		"flaky",
		func(ctx context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			if tries.add(in.Slice) == 1 && in.Slice == 2 {
				return bakeapi.BakeSliceOutput{}, errors.New("connection reset by peer")
			}
			if in.Slice == 2 {
				mu.Lock()
				seen[activity.GetInfo(ctx).Attempt] = true
				mu.Unlock()
			}
			return fakeSlice(in), nil
		},
	)
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("bake failed despite a retry budget of %d: %v", in.Policy.SliceMaxAttempts, err)
	}
	if tries.get(2) != 2 || !seen[2] {
		t.Errorf(
			"slice 2 ran %d times (attempts seen %v), want 2 with the second as attempt 2",
			tries.get(2),
			seen,
		)
	}
	var out bakeapi.BakeOutput
	if err := env.GetWorkflowResult(&out); err != nil ||
		out.ReleaseURI != "s3://releases/datasets/t/v1/" {
		t.Errorf("result %+v (%v), want the pushed release", out, err)
	}
}

// TestSliceRetriesAreBounded: a slice that always fails gives up after
// SliceMaxAttempts instead of Temporal's default of forever.
func TestSliceRetriesAreBounded(t *testing.T) {
	env := newEnv()
	var tries attempts
	in := oneSplitBake(
		env,
		"doomed",
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			tries.add(in.Slice)
			if in.Slice == 0 {
				return bakeapi.BakeSliceOutput{}, errors.New("GPU fell off the bus")
			}
			return fakeSlice(in), nil
		},
	)
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	if env.GetWorkflowError() == nil {
		t.Fatal("bake succeeded with a slice that always fails")
	}
	if got := tries.get(0); got != int(in.Policy.SliceMaxAttempts) {
		t.Errorf("slice 0 ran %d times, want SliceMaxAttempts=%d", got, in.Policy.SliceMaxAttempts)
	}
}

// TestCancelBake: cancelling the bake mid-slice ends it as cancelled, the
// merges beside its splits with it, and nothing after the slices runs.
func TestCancelBake(t *testing.T) {
	env := newEnv()
	in := twoSplitInput("cancel")
	env.RegisterWorkflow(workflows.SplitWorkflow)
	env.OnActivity(acts.GenerateSeeds, mock.Anything, mock.Anything).Return(seedsMock)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(time.Hour).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	env.OnActivity(acts.MergeSplit, mock.Anything, mock.Anything).After(2 * time.Hour).Return(
		func(_ context.Context, m bakeapi.MergeSplitInput) (bakeapi.MergeSplitOutput, error) {
			return fakeMerge(in)(m), nil
		})
	env.RegisterDelayedCallback(env.CancelWorkflow, 30*time.Minute)
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	err := env.GetWorkflowError()
	if !temporal.IsCanceledError(err) {
		t.Fatalf("workflow error %v, want a cancellation", err)
	}
	env.AssertNotCalled(t, "CombineSplits", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "Push", mock.Anything, mock.Anything)
}

// appErrorTypes lists the type of every ApplicationError in err's cause chain,
// outermost first: what the UI and `whestbake status` can show.
func appErrorTypes(err error) []string {
	var out []string
	for err != nil {
		var app *temporal.ApplicationError
		if !errors.As(err, &app) {
			break
		}
		out = append(out, app.Type())
		err = app.Unwrap()
	}
	return out
}
