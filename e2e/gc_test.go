package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestGC: a finished bake leaves no intermediates by default; one that kept
// them (bake.keep-intermediates) loses them to `whestbake gc` and still
// downloads. gc refuses a running bake; of a cancelled one it deletes
// everything but the record.
func TestGC(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	ctx := context.Background()
	statusCfg := s.writeConfig("status", s.baseConfig())
	intermediates := func(id string) (n, total int) {
		t.Helper()
		all, err := s.art.List(ctx, keys.Bake(id).Prefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range all {
			if keys.Bake(id).Intermediate(k) {
				n++
			}
		}
		return n, len(all)
	}

	t.Run("completed", func(t *testing.T) {
		s := s.sub(t)
		auto := smallBake("gc-auto", 300)
		s.bake(auto)
		if n, _ := intermediates(auto.ID); n != 0 {
			t.Errorf("a finished bake left %d intermediates", n)
		}
		kept := smallBake("gc-kept", 400)
		cfg := s.bakeConfigMap(kept)
		cfg["bake"].(map[string]any)["keep-intermediates"] = true
		s.mustWhestbake("bake", "--config-file", s.writeConfig("bake-gc-kept", cfg),
			"--id", kept.ID, "--wait")
		if n, _ := intermediates(kept.ID); n == 0 {
			t.Fatal("keep-intermediates kept none")
		}
		r := s.mustWhestbake("gc", kept.ID, "--config-file", statusCfg)
		if !strings.Contains(r.stdout, "Kept its record, seeds and final dataset") {
			t.Errorf("gc of a completed bake does not say what it kept:\n%s", r)
		}
		if n, total := intermediates(kept.ID); n != 0 || total == 0 {
			t.Errorf("after gc: %d intermediates of %d objects, want none of some", n, total)
		}
		s.mustWhestbake("dataset", "download", "bake:"+kept.ID, "--config-file", statusCfg,
			"--output", t.TempDir()+"/d")
	})

	t.Run("running, then cancelled", func(t *testing.T) {
		s := s.sub(t)
		slow := bakeSpec{
			ID:          "gc-cancel",
			Width:       64,
			Depth:       4,
			NSamples:    5_000_000,
			SliceSize:   1,
			MaxInFlight: 1,
			Tag:         "gc-cancel",
			Splits:      []splitSpec{{"public", "default", 3, 9}},
		}
		s.mustWhestbake("bake", "--config-file", s.bakeConfig(slow), "--id", slow.ID)
		waitFor(t, time.Minute, "the first slice to start", func() bool {
			ok, err := s.art.Exists(ctx, keys.Bake(slow.ID).IdentitiesDone("public"))
			return err == nil && ok
		})
		r := s.whestbake(nil, "gc", slow.ID, "--config-file", statusCfg)
		if !r.refused("is running", "whestbake cancel "+slow.ID) {
			t.Errorf("gc of a running bake: want a refusal that says how to stop it:\n%s", r)
		}
		s.cancelAndWaitClosed(t, statusCfg, slow.ID, "public")
		r = s.mustWhestbake("gc", slow.ID, "--config-file", statusCfg)
		if !strings.Contains(r.stdout, "it canceled") ||
			!strings.Contains(r.stdout, "recompute it from scratch") {
			t.Errorf("gc of a cancelled bake does not say what it did:\n%s", r)
		}
		left, err := s.art.List(ctx, keys.Bake(slow.ID).Prefix())
		bk := keys.Bake(slow.ID)
		if err != nil || len(left) != 2 || left[0] != bk.Record() || left[1] != bk.StartedIn() {
			t.Errorf("after gc of a cancelled bake: %v (%v), "+
				"want its record and where it was started", left, err)
		}
	})
}

// cancelAndWaitClosed cancels bake id and waits until its workflow and its
// splits' have closed: gc refuses while any of them runs.
func (s *stack) cancelAndWaitClosed(t *testing.T, cfg, id string, splits ...string) {
	t.Helper()
	s.mustWhestbake("cancel", id, "--config-file", cfg)
	ids := []string{bakeapi.BakeWorkflowID(id)}
	for _, sp := range splits {
		ids = append(ids, bakeapi.SplitWorkflowID(id, sp))
	}
	waitFor(t, time.Minute, "the cancelled bake and its splits to close", func() bool {
		for _, wid := range ids {
			d, err := s.tc.DescribeWorkflowExecution(context.Background(), wid, "")
			if err != nil || d.GetWorkflowExecutionInfo().GetCloseTime() == nil {
				return false
			}
		}
		return true
	})
}
