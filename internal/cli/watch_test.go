package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/settings"
)

func baking(done, slicesDone, running int, started time.Time) splitState {
	return splitState{SplitProgress: bakeapi.SplitProgress{Split: "public", Stage: bakeapi.StageBaking,
		MLPsDone: done, MLPsTotal: 4, SlicesDone: slicesDone, SlicesTotal: 4, SlicesRunning: running, StartedAt: started}}
}

// Without a terminal, bake --wait prints a line when something changed and
// nothing when only the clock or a running slice's samples moved.
func TestChangeLinesPrintOnlyChanges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	running := enums.WORKFLOW_EXECUTION_STATUS_RUNNING
	st := bakeState{ID: "b", Status: running, Stage: bakeapi.StageBaking, Splits: []splitState{baking(0, 0, 2, t0)}}
	last := map[string]string{}
	got := changeLines(st, t0.Add(time.Second), last)
	want := []string{"bake b: running, stage baking", "  split public: baking, 0/4 MLPs, 0/4 slices (2 running)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("first lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A running slice's heartbeat and the clock alone change nothing.
	st.Splits[0].Running = []bakeapi.SliceProgress{{TotalMLPs: 1, SamplesDone: 5, SamplesEach: 10}}
	if got := changeLines(st, t0.Add(5*time.Second), last); len(got) != 0 {
		t.Fatalf("printed without a change: %q", got)
	}
	st.Splits[0] = baking(1, 1, 2, t0)
	got = changeLines(st, t0.Add(10*time.Second), last)
	if len(got) != 1 || got[0] != "  split public: baking, 1/4 MLPs, 1/4 slices (2 running), ETA 30.0s" {
		t.Fatalf("after a slice: %q", got)
	}
}

// The ETA scales the time elapsed up to now by the work left, so it never
// lies in the past while work is left.
func TestETA(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := baking(2, 2, 1, t0)
	if got := eta(s, t0.Add(20*time.Second)); got != "20.0s" {
		t.Errorf("2 of 4 after 20 s: %s, want 20.0s", got)
	}
	// Nothing finished for long after the last slice: the estimate grows.
	if got := eta(s, t0.Add(100*time.Second)); got != "1m 40s" {
		t.Errorf("2 of 4 after 100 s: %s, want 1m 40s", got)
	}
	if got := eta(baking(0, 0, 1, t0), t0.Add(time.Minute)); got != "-" {
		t.Errorf("nothing done: %s, want -", got)
	}
	half := baking(0, 0, 1, t0)
	half.Running = []bakeapi.SliceProgress{{TotalMLPs: 2, DoneMLPs: 1}}
	if got := eta(half, t0.Add(10*time.Second)); got != "30.0s" {
		t.Errorf("1 of 4 by heartbeat after 10 s: %s, want 30.0s", got)
	}
}

// A cancelled bake shows what finished (from the split's history, not 0),
// the counts, what was stopped and what never started, and exits 0.
func TestStatusOfACancelledBake(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sp := splitState{SplitProgress: bakeapi.SplitProgress{Split: "public", Stage: "canceled", MLPsDone: 2, MLPsTotal: 6, SlicesDone: 2, SlicesTotal: 6},
		Hist: &runHistory{Computed: 1, Reused: 1, SlicesDone: 2, MLPsDone: 2,
			Open: []openActivity{{Type: bakeapi.BakeSliceActivity, Slice: &bakeapi.BakeSliceInput{Slice: 2, Start: 2, End: 3}}}}}
	st := bakeState{ID: "c", Status: enums.WORKFLOW_EXECUTION_STATUS_CANCELED, Stage: bakeapi.StageBaking, Start: t0, End: t0.Add(time.Minute),
		Input: &bakeapi.BakeInput{BakeParams: bakeapi.BakeParams{SliceSize: 1, MaxInFlight: 1}}, Splits: []splitState{sp}}
	var b bytes.Buffer
	printStatus(&b, settings.Default(), st, t0.Add(2*time.Minute))
	out := b.String()
	for _, want := range []string{
		"Bake c: CANCELED, stage baking",
		"COMPUTED RESUMED REUSED",
		"public           canceled  2/6         2/6                    1        0       1",
		"Canceled during stage baking. Running then, and stopped:",
		"split public: slice 2 (MLPs 2-2), 3 slice(s) not started",
		"Finished MLPs stay in S3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if err := st.exitError(); err != nil {
		t.Errorf("exit error %v for a cancelled bake", err)
	}
}

// A bake that failed on a slice its workers kept stopping: status counts
// the stops and says the slice ran, with its attempts, rather than "not
// started"; a slice scheduled and cancelled before it started is not one
// that ran.
func TestStatusOfStoppedSlices(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sp := splitState{SplitProgress: bakeapi.SplitProgress{Split: "public", Stage: "failed", MLPsDone: 2, MLPsTotal: 5, SlicesDone: 2, SlicesTotal: 5},
		Hist: &runHistory{Computed: 2, SlicesDone: 2, MLPsDone: 2, Stops: 7, Unfinished: map[int]*sliceRuns{
			2: {In: bakeapi.BakeSliceInput{Slice: 2, Start: 2, End: 3}, Attempts: 5, Stops: 5, LastType: bakeapi.ErrWorkerStopping},
			3: {In: bakeapi.BakeSliceInput{Slice: 3, Start: 3, End: 4}, Attempts: 2, Stops: 2},
			4: {In: bakeapi.BakeSliceInput{Slice: 4, Start: 4, End: 5}},
		}, Open: []openActivity{{Type: bakeapi.BakeSliceActivity, Slice: &bakeapi.BakeSliceInput{Slice: 3, Start: 3, End: 4}}}}}
	st := bakeState{ID: "f", Status: enums.WORKFLOW_EXECUTION_STATUS_FAILED, Stage: bakeapi.StageBaking, Start: t0, End: t0.Add(time.Minute),
		Input: &bakeapi.BakeInput{BakeParams: bakeapi.BakeParams{SliceSize: 1, MaxInFlight: 1}}, Splits: []splitState{sp}}
	var b bytes.Buffer
	printStatus(&b, settings.Default(), st, t0.Add(2*time.Minute))
	out := b.String()
	for _, want := range []string{
		"COMPUTED RESUMED REUSED STOPS",
		"public           failed    2/5         2/5                    2        0       0      7",
		"split public: slice 3 (MLPs 3-3) after 2 stop(s) by its workers, slice 2 (MLPs 2-2) ran 5 attempt(s), 5 stopped by their worker, last failure WorkerStopping, 1 slice(s) not started",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// Done work is done: a split's counts and bar never go down, when a
// progress query fails (no control worker) nor when a restart's run counts
// from 0 while earlier runs' slices wait for a worker; the ETA of counts
// carried over is unknown rather than made up.
func TestProgressNeverGoesBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	w := newBakeWatcher(nil, settings.Temporal{}, "b")
	w.input = &bakeapi.BakeInput{BakeParams: bakeapi.BakeParams{SliceSize: 1},
		Splits: []bakeapi.SplitSpec{{Name: "public", NMLPs: 4}}}
	wid := bakeapi.SplitWorkflowID("b", "public")
	w.carried[wid] = doneWork{} // no earlier run: nothing to ask the server
	refresh := func(sp splitState) splitState {
		w.keepDone(context.Background(), &sp, wid)
		return sp
	}
	first := baking(2, 2, 1, t0)
	first.Running = []bakeapi.SliceProgress{{TotalMLPs: 1, SamplesDone: 5, SamplesEach: 10}}
	if got := refresh(first).done(); got != 2.5 {
		t.Fatalf("2 MLPs and half of one: %.1f", got)
	}
	// The query failed: the split is running, its counts unknown.
	blind := refresh(splitState{SplitProgress: bakeapi.SplitProgress{Split: "public", Stage: bakeapi.StageBaking, MLPsTotal: 4}})
	if blind.MLPsDone != 2 || blind.SlicesDone != 2 || blind.done() != 2.5 {
		t.Errorf("after a failed query: %d MLPs, %d slices, bar %.1f; want 2, 2, 2.5", blind.MLPsDone, blind.SlicesDone, blind.done())
	}
	if got := eta(blind, t0.Add(time.Minute)); got != "-" {
		t.Errorf("ETA of carried counts: %s, want -", got)
	}

	// A restart: the earlier run committed slices 0, 1 and 3 (MLPs 0, 1, 3).
	restart := newBakeWatcher(nil, settings.Temporal{}, "b")
	restart.input = w.input
	restart.carried[wid] = restart.countCommitted(wid, map[int]bakeapi.Range{0: {Start: 0, End: 1}, 1: {Start: 1, End: 2},
		3: {Start: 3, End: 4}})
	sp := baking(0, 0, 1, t0)
	restart.keepDone(context.Background(), &sp, wid)
	if sp.MLPsDone != 3 || sp.SlicesDone != 3 || sp.done() != 3 || eta(sp, t0.Add(time.Minute)) != "-" {
		t.Errorf("restart before any worker: %d MLPs, %d slices, bar %.1f, ETA %s; want 3, 3, 3.0, -",
			sp.MLPsDone, sp.SlicesDone, sp.done(), eta(sp, t0.Add(time.Minute)))
	}
	// Once the run's own count passes them, it is the run's own again.
	sp = baking(4, 4, 0, t0)
	restart.keepDone(context.Background(), &sp, wid)
	if sp.MLPsDone != 4 || sp.carried {
		t.Errorf("restart caught up: %d MLPs, carried %v", sp.MLPsDone, sp.carried)
	}
}

// An earlier run that sliced otherwise (another slice-size) counts its
// MLPs once each, and only its slices that are slices of this run.
func TestCountCommittedAcrossSlicings(t *testing.T) {
	w := newBakeWatcher(nil, settings.Temporal{}, "b")
	w.input = &bakeapi.BakeInput{BakeParams: bakeapi.BakeParams{SliceSize: 2},
		Splits: []bakeapi.SplitSpec{{Name: "public", NMLPs: 6}}}
	got := w.countCommitted(bakeapi.SplitWorkflowID("b", "public"), map[int]bakeapi.Range{
		0: {Start: 0, End: 2}, // a slice of this run too
		1: {Start: 1, End: 4}, // overlaps it
		2: {Start: 4, End: 6}, // this run's slice 2
	})
	if got.MLPs != 6 || got.Slices != 2 {
		t.Errorf("got %d MLPs and %d slices, want 6 and 2", got.MLPs, got.Slices)
	}
}
