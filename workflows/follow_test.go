package workflows_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// TestEachSplitIsMergedBesideItsSlices: a bake starts each split's
// MergeSplit with the split, not after its last slice, and combines the
// merged splits with CombineSplits.
func TestEachSplitIsMergedBesideItsSlices(t *testing.T) {
	env := newEnv()
	in := twoSplitInput("beside")
	env.RegisterWorkflow(workflows.SplitWorkflow)
	env.OnActivity(acts.GenerateSeeds, mock.Anything, mock.Anything).Return(seedsMock)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	var mu sync.Mutex
	started := map[string]time.Time{}
	start := env.Now()
	env.OnActivity(acts.MergeSplit, mock.Anything, mock.Anything).Return(
		func(_ context.Context, m bakeapi.MergeSplitInput) (bakeapi.MergeSplitOutput, error) {
			mu.Lock()
			started[m.Split] = env.Now()
			mu.Unlock()
			return fakeMerge(in)(m), nil
		})
	env.OnActivity(acts.CombineSplits, mock.Anything, mock.Anything).Return(
		func(_ context.Context, c bakeapi.CombineSplitsInput) (bakeapi.CombineSplitsOutput, error) {
			return fakeCombine(c), nil
		})
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, s := range in.Splits {
		at, ok := started[s.Name]
		if !ok || at.Sub(start) >= sliceMinutes {
			t.Errorf("split %s's merge started %v after the bake (ok %v), want before its first slice ended",
				s.Name, at.Sub(start), ok)
		}
	}
	var out bakeapi.BakeOutput
	if err := env.GetWorkflowResult(&out); err != nil || out.DatasetPrefix == "" {
		t.Errorf("result %+v (%v), want the combined dataset", out, err)
	}
}

// TestAFailedMergeFailsTheBake: a merge that fails for good (a damaged
// slice) fails the bake while its split still bakes, naming the merge and
// its cause; nothing is combined or pushed.
func TestAFailedMergeFailsTheBake(t *testing.T) {
	env := newEnv()
	in := twoSplitInput("merge-fails")
	env.RegisterWorkflow(workflows.SplitWorkflow)
	env.OnActivity(acts.GenerateSeeds, mock.Anything, mock.Anything).Return(seedsMock)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(time.Hour).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	env.OnActivity(acts.MergeSplit, mock.Anything, mock.Anything).After(time.Minute).Return(
		func(_ context.Context, m bakeapi.MergeSplitInput) (bakeapi.MergeSplitOutput, error) {
			return bakeapi.MergeSplitOutput{}, temporal.NewNonRetryableApplicationError(
				"slice 0 is damaged", bakeapi.ErrCorruptPartial, errors.New("sha256 mismatch"))
		})
	start := env.Now()
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	err := env.GetWorkflowError()
	if err == nil {
		t.Fatal("the bake succeeded with a merge that failed for good")
	}
	for _, want := range []string{"merge of split", "slice 0 is damaged"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if took := env.Now().Sub(start); took >= time.Hour {
		t.Errorf("the bake failed after %v, want it failed when the merge did, not after the slices", took)
	}
	env.AssertNotCalled(t, "CombineSplits", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "Push", mock.Anything, mock.Anything)
}
