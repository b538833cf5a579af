package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// TestTwoBakesAtOnce: two bakes with different seeds share the same workers
// at the same time. Each release is its own local bake, and neither bake
// wrote outside its own prefix.
func TestTwoBakesAtOnce(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	s.startWorker("gpu")
	bakes := []bakeSpec{smallBake("twin-a", 300), smallBake("twin-b", 400)}
	for i := range bakes {
		// ~0.1 s per MLP: the bakes overlap.
		bakes[i].Width = 32
		bakes[i].Depth = 3
		bakes[i].NSamples = 300_000
		s.mustWhestbake("bake", "--config-file", s.bakeConfig(bakes[i]), "--id", bakes[i].ID)
	}
	for _, b := range bakes {
		s.watch(s.bakeConfig(b), b.ID)
	}

	// Slices of the two bakes ran interleaved on the shared GPU workers.
	var first, last [2]time.Time
	for i, b := range bakes {
		for _, sp := range b.Splits {
			for _, r := range s.sliceRuns(bakeapi.SplitWorkflowID(b.ID, sp.Name)) {
				if first[i].IsZero() || r.Started.Before(first[i]) {
					first[i] = r.Started
				}
				if r.Closed.After(last[i]) {
					last[i] = r.Closed
				}
			}
		}
	}
	if !first[1].Before(last[0]) || !first[0].Before(last[1]) {
		t.Errorf("the bakes' slices did not overlap (%v–%v and %v–%v): "+
			"the test proves nothing about isolation", first[0], last[0], first[1], last[1])
	}

	for _, b := range bakes {
		datasettest.SameDataset(t, s.download(b), s.localBake(b))
	}
	// Every object of the two bakes sits under its own bake's prefix.
	all, err := s.art.List(context.Background(), "bakes/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if !strings.HasPrefix(k, bakePrefix("twin-a")) &&
			!strings.HasPrefix(k, bakePrefix("twin-b")) {
			t.Errorf("object %s belongs to neither bake", k)
		}
	}
	for _, b := range bakes {
		for _, sp := range b.Splits {
			for _, r := range s.sliceRuns(bakeapi.SplitWorkflowID(b.ID, sp.Name)) {
				if r.In.BakeID != b.ID || !strings.HasPrefix(r.Out.Prefix, bakePrefix(b.ID)) {
					t.Errorf("bake %s split %s ran a slice of %s into %s",
						b.ID, sp.Name, r.In.BakeID, r.Out.Prefix)
				}
			}
		}
	}
}

// TestTwoStartsOfOneBake: two `whestbake bake` of one new ID at once start
// one run, and say so: one says it started the bake, and the other either
// that it reattached to the running bake, which keeps the input it started
// with, or that another process is starting it. Both used to say
// "Started" about one time in three, of the same run.
func TestTwoStartsOfOneBake(t *testing.T) {
	s := newStack(t) // no workers: a start needs none
	for round := range 6 {
		b := smallBake(fmt.Sprintf("race-%d", round), uint64(900+round))
		cfg := s.bakeConfig(b)
		var wg sync.WaitGroup
		var starts [2]result
		for i := range starts {
			wg.Go(func() { starts[i] = s.whestbake(nil, "bake", "--config-file", cfg, "--id", b.ID) })
		}
		wg.Wait()
		started, reattached := 0, 0
		for _, r := range starts {
			switch {
			case r.code == 0 && strings.HasPrefix(r.stdout, "Started bake "+b.ID):
				started++
			case r.code == 0 && strings.HasPrefix(r.stdout, "Reattached to running bake "+b.ID) &&
				strings.Contains(r.stdout, "the input it started with"):
				reattached++
			case r.refused("bake " + b.ID + " is being started by another process"):
			default:
				t.Errorf("round %d: a start of a bake started at the same time:\n%s", round, r)
			}
		}
		if started != 1 {
			t.Errorf("round %d: %d starts said they started the bake (%d reattached), want 1:\n%s\n%s",
				round, started, reattached, starts[0], starts[1])
		}
	}
}
