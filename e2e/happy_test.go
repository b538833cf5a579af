package e2e

import (
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// TestHappyPath: a two-split bake of several slices per split through real
// workers; the release validates and its parquet files and report are
// byte-identical to the local bake + merge + combine-splits of the same seeds.
func TestHappyPath(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	s.startWorker("gpu")
	b := smallBake("happy", 100)
	cfg := s.bakeConfig(b)
	r := s.bake(b)
	if !strings.Contains(r.stdout+r.stderr, releaseURI(b)) {
		t.Errorf("`whestbake bake --wait` does not say where the release is (%s):\n%s",
			releaseURI(b), r)
	}
	datasettest.SameDataset(t, s.download(b), s.localBake(b))

	for _, sp := range b.Splits {
		runs := s.sliceRuns(bakeapi.SplitWorkflowID(b.ID, sp.Name))
		if len(runs) != b.slices(sp.NMLPs) {
			t.Errorf("split %s: %d slices completed, want %d",
				sp.Name, len(runs), b.slices(sp.NMLPs))
		}
		for _, run := range runs {
			if n := run.In.End - run.In.Start; run.Out.Computed != n || run.Attempt != 1 {
				t.Errorf("split %s slice %d: attempt %d %+v, want one attempt computing %d MLPs",
					sp.Name, run.In.Slice, run.Attempt, run.Out, n)
			}
		}
	}
	st := s.mustWhestbake("status", b.ID, "--config-file", cfg)
	if !strings.Contains(st.stdout, "done") {
		t.Errorf("`whestbake status` of a finished bake does not say done:\n%s", st)
	}

	// A completed bake is never redone under the same id.
	again := s.whestbake(nil, "bake", "--config-file", cfg, "--id", b.ID)
	if again.code == 0 || !strings.Contains(again.stderr, "complete") {
		t.Errorf("re-running a completed bake: want a refusal that says it completed:\n%s", again)
	}

	t.Run("replay live histories", func(t *testing.T) {
		s.replayLive(t, bakeapi.BakeWorkflowID(b.ID))
		for _, sp := range b.Splits {
			s.replayLive(t, bakeapi.SplitWorkflowID(b.ID, sp.Name))
		}
	})
}
