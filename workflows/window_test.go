package workflows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/workflows"
)

// sliceMinutes is how long each mocked slice takes on the workflow clock. The
// test clock only moves once every started activity is blocked on it, so all
// slices the window allows are started before any finishes: the count below
// is exact, not a race.
const sliceMinutes = 10 * time.Minute

// windowCounter counts BakeSlice activities running at once, as the test
// server sees them (start and completion both run on its main loop).
type windowCounter struct {
	running, peak, started int
	ranges                 map[int][2]int // by slice index
}

func (w *windowCounter) listen(env *testsuite.TestWorkflowEnvironment) {
	w.ranges = map[int][2]int{}
	env.SetOnActivityStartedListener(
		func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			if info.ActivityType.Name != "BakeSlice" {
				return
			}
			var in bakeapi.BakeSliceInput
			_ = args.Get(&in)
			w.running++
			w.started++
			w.peak = max(w.peak, w.running)
			w.ranges[in.Slice] = [2]int{in.Start, in.End}
		},
	)
	env.SetOnActivityCompletedListener(
		func(info *activity.Info, _ converter.EncodedValue, _ error) {
			if info.ActivityType.Name == "BakeSlice" {
				w.running--
			}
		},
	)
}

func splitInput(bakeID string, n, sliceSize, window int) bakeapi.SplitInput {
	b := twoSplitInput(bakeID)
	spec := bakeapi.SplitSpec{
		Name:   "public",
		Config: "default",
		NMLPs:  n,
		Seed:   u64(1),
	}
	return bakeapi.SplitInput{
		BakeParams: bakeapi.BakeParams{
			BakeID:      bakeID,
			Spec:        b.Spec,
			SliceSize:   sliceSize,
			MaxInFlight: window,
			GPUQueue:    bakeapi.GPUQueue,
			Policy:      b.Policy,
		},
		Split: spec,
		Seeds: bakeapi.GenerateSeedsOutput{
			SeedsKey: keys.Bake(bakeID).Seeds("public"),
			SHA256:   "s",
			NMLPs:    n,
		},
	}
}

func TestSplitWindowNeverExceedsMaxInFlight(t *testing.T) {
	cases := []struct{ n, sliceSize, window int }{
		{10, 1, 3}, // 10 slices through a window of 3
		{7, 2, 1},  // strictly one at a time
		{9, 3, 8},  // window wider than the 3 slices
		{5, 2, 2},  // uneven slices: [0,1) [1,3) [3,5)
	}
	for _, c := range cases {
		env := newEnv()
		var w windowCounter
		w.listen(env)
		env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
			func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
				return fakeSlice(in), nil
			})
		in := splitInput("win", c.n, c.sliceSize, c.window)
		env.ExecuteWorkflow(workflows.SplitWorkflow, in)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("n=%d size=%d window=%d: %v", c.n, c.sliceSize, c.window, err)
		}
		want := wantSlices(c.n, c.sliceSize)
		if w.peak != min(c.window, len(want)) {
			t.Errorf(
				"n=%d size=%d window=%d: peak in flight %d, want %d",
				c.n,
				c.sliceSize,
				c.window,
				w.peak,
				min(c.window, len(want)),
			)
		}
		if w.started != len(want) {
			t.Errorf(
				"n=%d: %d BakeSlice runs, want %d (one per slice, no retries)",
				c.n,
				w.started,
				len(want),
			)
		}
		for k, r := range want {
			if w.ranges[k] != r {
				t.Errorf(
					"n=%d size=%d: slice %d covers %v, whestbench's --slice %d/%d is %v",
					c.n,
					c.sliceSize,
					k,
					w.ranges[k],
					k,
					len(want),
					r,
				)
			}
		}
		var out bakeapi.SplitOutput
		if err := env.GetWorkflowResult(&out); err != nil || out.NMLPs != c.n ||
			out.Slices != len(want) {
			t.Errorf("result %+v (%v), want %d MLPs in %d slices", out, err, c.n, len(want))
		}
	}
}

// TestSplitProgressQuery checks the query mid-run against a timeline worked out
// by hand: 6 one-MLP slices, window 2, each 10 minutes.
func TestSplitProgressQuery(t *testing.T) {
	env := newEnv()
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	query := func() bakeapi.SplitProgress {
		t.Helper()
		v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
		if err != nil {
			t.Fatalf("progress query: %v", err)
		}
		var p bakeapi.SplitProgress
		if err := v.Get(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var mid bakeapi.SplitProgress
	// At 15 min: slices 0 and 1 finished at 10 min, 2 and 3 are running; the
	// ETA extrapolates 10 min per 2 MLPs to 6 MLPs: start + 30 min.
	env.RegisterDelayedCallback(func() { mid = query() }, 15*time.Minute)
	env.ExecuteWorkflow(workflows.SplitWorkflow, splitInput("prog", 6, 1, 2))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	want := bakeapi.SplitProgress{
		Split:         "public",
		Stage:         bakeapi.StageBaking,
		MLPsDone:      2,
		MLPsTotal:     6,
		SlicesDone:    2,
		SlicesTotal:   6,
		SlicesRunning: 2,
		MaxInFlight:   2,
		StartedAt:     start,
		ETA:           start.Add(30 * time.Minute),
	}
	if !mid.StartedAt.Equal(want.StartedAt) || !mid.ETA.Equal(want.ETA) {
		t.Errorf(
			"mid-run times: started %v eta %v, want %v and %v",
			mid.StartedAt,
			mid.ETA,
			want.StartedAt,
			want.ETA,
		)
	}
	mid.StartedAt = time.Time{}
	mid.ETA = time.Time{}
	want.StartedAt = time.Time{}
	want.ETA = time.Time{}
	if mid != want {
		t.Errorf("mid-run progress\n got %+v\nwant %+v", mid, want)
	}
	end := query()
	if end.Stage != bakeapi.StageDone || end.MLPsDone != 6 || end.SlicesDone != 6 ||
		end.SlicesRunning != 0 {
		t.Errorf("final progress %+v, want stage done with 6/6 MLPs and slices", end)
	}
}

// TestBakeProgressQuery follows the parent's stage and the children's own
// progress, both answered by the progress query.
func TestBakeProgressQuery(t *testing.T) {
	env := newEnv()
	in := twoSplitInput("bq")
	env.OnActivity(acts.GenerateSeeds, mock.Anything, mock.Anything).Return(seedsMock)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).After(sliceMinutes).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			return fakeSlice(in), nil
		})
	mockMergeAndCombine(env, in)
	env.RegisterWorkflow(workflows.SplitWorkflow)
	var parent bakeapi.BakeProgress
	var child bakeapi.SplitProgress
	// The answers' JSON, as `temporal workflow query` shows it: at 5 min
	// no slice has finished, so the child knows no ETA yet.
	var parentJSON, childJSON json.RawMessage
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
		if err == nil {
			err = v.Get(&parentJSON)
		}
		if err == nil {
			v, err = env.QueryWorkflowByID(
				bakeapi.SplitWorkflowID("bq", "public"),
				bakeapi.ProgressQuery,
			)
		}
		if err == nil {
			err = v.Get(&childJSON)
		}
		if err != nil {
			t.Errorf("progress at 5 min: %v", err)
		}
	}, 5*time.Minute)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
		if err == nil {
			err = v.Get(&parent)
		}
		if err != nil {
			t.Errorf("parent progress: %v", err)
		}
		v, err = env.QueryWorkflowByID(
			bakeapi.SplitWorkflowID("bq", "public"),
			bakeapi.ProgressQuery,
		)
		if err == nil {
			err = v.Get(&child)
		}
		if err != nil {
			t.Errorf("child progress by ID %s: %v", bakeapi.SplitWorkflowID("bq", "public"), err)
		}
	}, 15*time.Minute)
	env.ExecuteWorkflow(workflows.BakeWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if parent.BakeID != "bq" || parent.Stage != bakeapi.StageBaking || len(parent.Splits) != 2 {
		t.Errorf("parent mid-run: %+v, want stage %s with 2 splits", parent, bakeapi.StageBaking)
	}
	// public (3 slices) still bakes; holdout (2) may be baked and merged.
	for _, s := range parent.Splits {
		if s.Stage != bakeapi.StageBaking && (s.Split == "public" || s.Stage != bakeapi.StageDone) {
			t.Errorf(
				"parent mid-run says split %s is %q, want %q",
				s.Split,
				s.Stage,
				bakeapi.StageBaking,
			)
		}
	}
	// An unknown time is absent, never year 1; a baking split is not seeding.
	for name, raw := range map[string]json.RawMessage{"parent": parentJSON, "public": childJSON} {
		if s := string(raw); s == "" || strings.Contains(s, "0001-01-01") ||
			strings.Contains(s, `"ETA"`) ||
			strings.Contains(s, `"seeding"`) {
			t.Errorf("%s's progress at 5 min: %s; want no ETA, no zero time, no seeding", name, s)
		}
	}
	// public: 5 MLPs in slices [0,1) [1,3) [3,5); at 15 min the first two are done.
	if child.Split != "public" || child.SlicesDone != 2 || child.MLPsDone != 3 ||
		child.SlicesTotal != 3 ||
		child.MLPsTotal != 5 {
		t.Errorf("public mid-run: %+v, want 2/3 slices and 3/5 MLPs", child)
	}
	v, err := env.QueryWorkflow(bakeapi.ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var end bakeapi.BakeProgress
	if err := v.Get(&end); err != nil {
		t.Fatal(err)
	}
	if end.Stage != bakeapi.StageDone {
		t.Errorf("final stage %q, want %q", end.Stage, bakeapi.StageDone)
	}
	for i, s := range end.Splits {
		if s.Split != in.Splits[i].Name || s.MLPsDone != in.Splits[i].NMLPs ||
			s.MLPsTotal != in.Splits[i].NMLPs {
			t.Errorf(
				"final split %d: %+v, want %s with %d/%d MLPs",
				i,
				s,
				in.Splits[i].Name,
				in.Splits[i].NMLPs,
				in.Splits[i].NMLPs,
			)
		}
	}
	var out bakeapi.BakeOutput
	if err := env.GetWorkflowResult(&out); err != nil ||
		out.DatasetPrefix != keys.Bake("bq").Dataset() ||
		out.ReleaseURI != "" {
		t.Errorf(
			"result %+v (%v): want dataset %s and no release (no release bucket)",
			out,
			err,
			keys.Bake("bq").Dataset(),
		)
	}
}
