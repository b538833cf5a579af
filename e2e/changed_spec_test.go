package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestRestartWithAChangedSpecIsRefused is issue 8's bug 1: bake c7 is
// cancelled after its first MLP, n-samples is halved in the config, and the
// same --id is started again. That start must be refused before anything
// runs, naming the changed key; the original config then resumes, reuses the
// finished MLP, and the result equals a local bake byte for byte.
func TestRestartWithAChangedSpecIsRefused(t *testing.T) {
	s := newStack(t)
	s.startWorker("all")
	statusCfg := s.writeConfig("status", s.baseConfig())
	b := bakeSpec{
		ID:          "c7",
		Width:       64,
		Depth:       4,
		NSamples:    3_000_000,
		SliceSize:   3,
		MaxInFlight: 1,
		Tag:         "c7",
		Splits:      []splitSpec{{"public", "default", 3, 31}},
	}
	cfg := s.bakeConfig(b)
	ctx := context.Background()

	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
	waitFor(t, 2*time.Minute, "MLP 0 to finish", func() bool {
		ok, err := s.art.Exists(ctx, keys.Bake(b.ID).MLPResult("public", 0))
		return err == nil && ok
	})
	s.mustWhestbake("cancel", b.ID, "--config-file", statusCfg)
	waitFor(t, 30*time.Second, "the cancelled bake to close", func() bool {
		d, err := s.tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(b.ID), "")
		return err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil
	})
	before, _ := s.tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(b.ID), "")

	changed := b
	changed.NSamples = b.NSamples / 2
	changedCfg := s.writeConfig("changed", s.bakeConfigMap(changed))
	r := s.whestbake(nil, "bake", "--config-file", changedCfg, "--id", b.ID, "--wait")
	if !r.refused("n-samples: recorded 3000000, this config 1500000", "new --id") {
		t.Fatalf("a restart with n-samples changed was not refused as it should be:\n%s", r)
	}
	after, _ := s.tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(b.ID), "")
	beforeRun := before.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	if after.GetWorkflowExecutionInfo().GetExecution().GetRunId() != beforeRun {
		t.Fatal("the refused start ran the bake anyway")
	}

	r = s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")
	if !strings.Contains(r.stdout, "Restarted") {
		t.Errorf("the original config did not restart the bake:\n%s", r)
	}
	datasettest.SameDataset(t, s.download(b), s.localBake(b))
}
