package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestAutoInFlight: with max-in-flight left at its default, auto, a split
// keeps one slice per GPU worker in flight, as the server counts them: three
// workers, three slices at once, and the window the split reports is 3. The
// control worker is killed mid-split: its successor replays the split's
// history, local activity markers included, and finishes the bake.
func TestAutoInFlight(t *testing.T) {
	s := newStack(t)
	control := s.startWorker("control")
	for range 3 {
		s.startWorker("gpu")
	}
	b := bakeSpec{
		ID:        "auto",
		Width:     64,
		Depth:     4,
		NSamples:  400_000,
		SliceSize: 1,
		Tag:       "auto",
		Splits:    []splitSpec{{"public", "default", 9, 5}},
	}
	s.mustWhestbake("bake", "--config-file", s.bakeConfig(b), "--id", b.ID)
	waitFor(t, 2*time.Minute, "slice 2 to be committed", func() bool {
		slice2 := keys.Manifest(keys.Bake(b.ID).Slice("public", 2))
		ok, err := s.art.Exists(context.Background(), slice2)
		return err == nil && ok
	})
	control.kill()
	s.startWorker("control")
	s.watch(s.writeConfig("status", s.baseConfig()), b.ID)

	id := bakeapi.SplitWorkflowID(b.ID, "public")
	runs := s.sliceRuns(id)
	if len(runs) != 9 {
		t.Fatalf("%d slices completed, want 9", len(runs))
	}
	if peak, _ := peakOverlap(runs); peak != 3 {
		t.Errorf("at most %d slices ran at once on 3 GPU workers with max-in-flight auto, want 3",
			peak)
	}
	var p bakeapi.SplitProgress
	v, err := s.tc.QueryWorkflow(t.Context(), id, "", bakeapi.ProgressQuery)
	if err == nil {
		err = v.Get(&p)
	}
	if err != nil || p.MaxInFlight != 3 {
		t.Errorf("split progress %+v (%v): want the auto window of 3", p, err)
	}
	s.replayLive(t, id)
}

// peakOverlap is the most slice attempts that ran at the same time, and
// when that many first did.
func peakOverlap(runs []sliceRun) (peak int, at time.Time) {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, r := range runs {
		edges = append(edges, edge{r.Started, 1}, edge{r.Closed, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // a slice that ends as another starts did not overlap it
	})
	now := 0
	for _, e := range edges {
		now += e.delta
		if now > peak {
			peak = now
			at = e.at
		}
	}
	return peak, at
}
