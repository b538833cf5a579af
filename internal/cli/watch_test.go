package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/settings"
)

// Without a terminal, bake --wait prints a line when something changed and
// nothing when only the clock or a running slice's samples moved.
func TestChangeLinesPrintOnlyChanges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	split := bakeclient.Split{
		Name:          "public",
		Stage:         bakeapi.StageBaking,
		MLPsTotal:     4,
		SlicesTotal:   4,
		SlicesRunning: 2,
		StartedAt:     t0,
	}
	st := bakeclient.Status{
		ID:     "b",
		State:  "running",
		Stage:  bakeapi.StageBaking,
		Splits: []bakeclient.Split{split},
	}
	last := map[string]string{}
	got := changeLines(st, t0.Add(time.Second), last)
	want := []string{
		"bake b: running, stage baking",
		"  split public: baking, 0/4 MLPs, 0/4 slices (2 running)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("first lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A running slice's heartbeat and the clock alone change nothing.
	st.Splits[0].Running = []bakeclient.RunningSlice{
		{MLPsTotal: 1, SamplesDone: 5, SamplesEach: 10},
	}
	if got := changeLines(st, t0.Add(5*time.Second), last); len(got) != 0 {
		t.Fatalf("printed without a change: %q", got)
	}
	st.Splits[0] = split
	st.Splits[0].MLPsDone = 1
	st.Splits[0].SlicesDone = 1
	got = changeLines(st, t0.Add(10*time.Second), last)
	const afterOne = "  split public: baking, 1/4 MLPs, 1/4 slices (2 running), ETA 30.0s"
	if len(got) != 1 || got[0] != afterOne {
		t.Fatalf("after a slice: %q", got)
	}
}

// The ETA column says done, unknown ("-"), merging soon or the time left.
func TestETAColumn(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := bakeclient.Split{
		Name:      "public",
		Stage:     bakeapi.StageBaking,
		MLPsDone:  2,
		MLPsTotal: 4,
		StartedAt: t0,
	}
	if got := eta(s, t0.Add(100*time.Second)); got != "1m 40s" {
		t.Errorf("2 of 4 after 100 s: %s, want 1m 40s", got)
	}
	s.MLPsDone = 4
	if got := eta(s, t0.Add(time.Minute)); got != "merging soon" {
		t.Errorf("4 of 4: %s, want merging soon", got)
	}
	s.MLPsDone = 0
	if got := eta(s, t0.Add(time.Minute)); got != "-" {
		t.Errorf("nothing done: %s, want -", got)
	}
	s.Stage = bakeapi.StageDone
	if got := eta(s, t0.Add(time.Minute)); got != "done" {
		t.Errorf("a done split: %s, want done", got)
	}
}

// A cancelled bake shows what finished (from the split's history, not 0),
// the counts, what was stopped and what never started, and exits 0.
func TestStatusOfACancelledBake(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sp := bakeclient.Split{
		Name:        "public",
		Stage:       "canceled",
		MLPsDone:    2,
		MLPsTotal:   6,
		SlicesDone:  2,
		SlicesTotal: 6,
		History: &bakeclient.History{
			Computed:   1,
			Reused:     1,
			SlicesDone: 2,
			MLPsDone:   2,
			Open:       []bakeclient.OpenActivity{openSlice(2)},
		},
	}
	st := ended("c", "canceled", t0, sp)
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
	if err := st.Err(); err != nil {
		t.Errorf("exit error %v for a cancelled bake", err)
	}
}

// A bake that failed on a slice its workers kept stopping: status counts
// the stops and says the slice ran, with its attempts, rather than "not
// started"; a slice scheduled and cancelled before it started is not one
// that ran.
func TestStatusOfStoppedSlices(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sp := bakeclient.Split{
		Name:        "public",
		Stage:       "failed",
		MLPsDone:    2,
		MLPsTotal:   5,
		SlicesDone:  2,
		SlicesTotal: 5,
		History: &bakeclient.History{
			Computed:   2,
			SlicesDone: 2,
			MLPsDone:   2,
			Stops:      7,
			Unfinished: map[int]*bakeclient.SliceRuns{
				2: {
					Slice:       oneMLP(2),
					Attempts:    5,
					Stops:       5,
					LastFailure: bakeapi.ErrWorkerStopping,
				},
				3: {Slice: oneMLP(3), Attempts: 2, Stops: 2},
				4: {Slice: oneMLP(4)},
			},
			Open: []bakeclient.OpenActivity{openSlice(3)},
		},
	}
	st := ended("f", "failed", t0, sp)
	var b bytes.Buffer
	printStatus(&b, settings.Default(), st, t0.Add(2*time.Minute))
	out := b.String()
	for _, want := range []string{
		"COMPUTED RESUMED REUSED STOPS",
		"public           failed    2/5         2/5                    2        0       0      7",
		"split public: slice 3 (MLPs 3-3) after 2 stop(s) by its workers, " +
			"slice 2 (MLPs 2-2) ran 5 attempt(s), 5 stopped by their worker, " +
			"last failure WorkerStopping, 1 slice(s) not started",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// oneMLP is slice k of a split sliced one MLP each.
func oneMLP(k int) bakeclient.SliceRef {
	return bakeclient.SliceRef{Index: k, Start: k, End: k + 1}
}

// openSlice is slice k's BakeSlice, running when the history was read.
func openSlice(k int) bakeclient.OpenActivity {
	s := oneMLP(k)
	return bakeclient.OpenActivity{Activity: bakeapi.BakeSliceActivity, Slice: &s}
}

// ended is bake id, ended in state a minute after t0 in stage baking, with
// one split sliced one MLP each.
func ended(id, state string, t0 time.Time, sp bakeclient.Split) bakeclient.Status {
	return bakeclient.Status{
		ID:     id,
		State:  state,
		Stage:  bakeapi.StageBaking,
		Start:  t0,
		End:    t0.Add(time.Minute),
		Shape:  bakeclient.Shape{SliceSize: 1, MaxInFlight: 1},
		Splits: []bakeclient.Split{sp},
	}
}
