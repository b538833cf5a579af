package bakeclient

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/settings"
)

func baking(done, slicesDone, running int, started time.Time) Split {
	return Split{
		Name:          "public",
		Stage:         bakeapi.StageBaking,
		MLPsDone:      done,
		MLPsTotal:     4,
		SlicesDone:    slicesDone,
		SlicesTotal:   4,
		SlicesRunning: running,
		StartedAt:     started,
	}
}

// The time left scales the time elapsed up to now by the work left, so it
// never lies in the past while work is left; it is unknown before any
// work is done and while the counts are carried over.
func TestRemaining(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := baking(2, 2, 1, t0)
	if left, ok := s.Remaining(t0.Add(20 * time.Second)); !ok || left != 20*time.Second {
		t.Errorf("2 of 4 after 20 s: %s %v, want 20s", left, ok)
	}
	// Nothing finished for long after the last slice: the estimate grows.
	if left, ok := s.Remaining(t0.Add(100 * time.Second)); !ok || left != 100*time.Second {
		t.Errorf("2 of 4 after 100 s: %s %v, want 1m40s", left, ok)
	}
	if _, ok := baking(0, 0, 1, t0).Remaining(t0.Add(time.Minute)); ok {
		t.Error("nothing done: an ETA, want none")
	}
	half := baking(0, 0, 1, t0)
	half.Running = []RunningSlice{{MLPsTotal: 2, MLPsDone: 1}}
	if left, ok := half.Remaining(t0.Add(10 * time.Second)); !ok || left != 30*time.Second {
		t.Errorf("1 of 4 by heartbeat after 10 s: %s %v, want 30s", left, ok)
	}
	if left, ok := baking(4, 4, 0, t0).Remaining(t0.Add(time.Minute)); !ok || left != 0 {
		t.Errorf("every MLP done: %s %v, want 0 (merging soon)", left, ok)
	}
	s.snapshot(t0.Add(20 * time.Second))
	if s.ETASeconds == nil || *s.ETASeconds != 20 || s.Estimate != 2 {
		t.Errorf("snapshot: ETA %v, estimate %v; want 20 s and 2 MLPs", s.ETASeconds, s.Estimate)
	}
}

// Done work is done: a split's counts and bar never go down, when a
// progress query fails (no control worker) nor when a restart's run counts
// from 0 while earlier runs' slices wait for a worker; the ETA of counts
// carried over is unknown rather than made up.
func TestProgressNeverGoesBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	w := newWatcher(nil, settings.Config{}, "b")
	w.input = &bakeapi.BakeInput{BakeParams: bakeapi.BakeParams{SliceSize: 1},
		Splits: []bakeapi.SplitSpec{{Name: "public", NMLPs: 4}}}
	wid := bakeapi.SplitWorkflowID("b", "public")
	w.carried[wid] = doneWork{} // no earlier run: nothing to ask the server
	refresh := func(sp Split) Split {
		w.keepDone(context.Background(), &sp, wid)
		return sp
	}
	first := baking(2, 2, 1, t0)
	first.Running = []RunningSlice{{MLPsTotal: 1, SamplesDone: 5, SamplesEach: 10}}
	if got := refresh(first).Done(); got != 2.5 {
		t.Fatalf("2 MLPs and half of one: %.1f", got)
	}
	// The query failed: the split is running, its counts unknown.
	blind := refresh(Split{Name: "public", Stage: bakeapi.StageBaking, MLPsTotal: 4})
	if blind.MLPsDone != 2 || blind.SlicesDone != 2 || blind.Done() != 2.5 {
		t.Errorf("after a failed query: %d MLPs, %d slices, bar %.1f; want 2, 2, 2.5",
			blind.MLPsDone, blind.SlicesDone, blind.Done())
	}
	if _, ok := blind.Remaining(t0.Add(time.Minute)); ok {
		t.Error("an ETA of carried counts, want none")
	}

	// A restart: the earlier run committed slices 0, 1 and 3 (MLPs 0, 1, 3).
	restart := newWatcher(nil, settings.Config{}, "b")
	restart.input = w.input
	restart.carried[wid] = restart.countCommitted(wid, map[int]bakeapi.Range{
		0: {Start: 0, End: 1},
		1: {Start: 1, End: 2},
		3: {Start: 3, End: 4},
	})
	sp := baking(0, 0, 1, t0)
	restart.keepDone(context.Background(), &sp, wid)
	_, known := sp.Remaining(t0.Add(time.Minute))
	if sp.MLPsDone != 3 || sp.SlicesDone != 3 || sp.Done() != 3 || known {
		t.Errorf("restart before any worker: %d MLPs, %d slices, bar %.1f, ETA known %v; "+
			"want 3, 3, 3.0, no ETA", sp.MLPsDone, sp.SlicesDone, sp.Done(), known)
	}
	// Once the run's own count passes them, it is the run's own again.
	sp = baking(4, 4, 0, t0)
	restart.keepDone(context.Background(), &sp, wid)
	if sp.MLPsDone != 4 || sp.CarriedOver {
		t.Errorf("restart caught up: %d MLPs, carried %v", sp.MLPsDone, sp.CarriedOver)
	}
}

// An earlier run that sliced otherwise (another slice-size) counts its
// MLPs once each, and only its slices that are slices of this run.
func TestCountCommittedAcrossSlicings(t *testing.T) {
	w := newWatcher(nil, settings.Config{}, "b")
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

func TestFailureOf(t *testing.T) {
	root := temporal.NewNonRetryableApplicationError("seeds file x is missing",
		bakeapi.ErrInvalidSeeds, nil)
	wrapped := fmt.Errorf("split public: %w", fmt.Errorf("slice 0: %w", root))
	want := Failure{
		Message:      "seeds file x is missing (InvalidSeeds, not retryable)",
		Type:         bakeapi.ErrInvalidSeeds,
		NonRetryable: true,
	}
	if got := failureOf(wrapped); *got != want {
		t.Errorf("failureOf = %+v, want %+v", *got, want)
	}
	if got := failureOf(temporal.NewCanceledError()); *got != (Failure{Message: "canceled"}) {
		t.Errorf("canceled: %+v", *got)
	}
}
