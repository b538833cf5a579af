package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// TestRestartRightAfterCancel: `whestbake bake ID` right after `whestbake
// cancel ID`, as the docs suggest, round after round: cancelled while its
// slices run, while the run is still starting, and with `cancel --no-wait`
// (the start then finds the bake winding down). Every restart starts a run
// that gets its splits going (the cancelled run's split workflows, still
// stopping their slices or merge, used to make it fail with
// ChildWorkflowExecutionAlreadyStarted); every run but the last ends
// cancelled, and the last completes, equal to a local bake.
func TestRestartRightAfterCancel(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	s.startWorker("gpu")
	// A few hundred milliseconds per MLP; the holdout split finishes early
	// and merges while public still bakes.
	b := bakeSpec{
		ID:          "again",
		Width:       32,
		Depth:       3,
		NSamples:    1_500_000,
		SliceSize:   1,
		MaxInFlight: 2,
		Tag:         "again",
		Splits:      []splitSpec{{"public", "default", 10, 41}, {"holdout", "holdout", 2, 42}},
	}
	cfg := s.bakeConfig(b)
	ctx := context.Background()
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
	const rounds = 6
	since := time.Time{}
	for i := range rounds {
		if i%3 != 2 { // else cancel the run while it starts
			waitFor(t, time.Minute, "the run's public split to run slices", func() bool {
				split := bakeapi.SplitWorkflowID(b.ID, "public")
				d, err := s.tc.DescribeWorkflowExecution(ctx, split, "")
				info := d.GetWorkflowExecutionInfo()
				return err == nil && info.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING &&
					info.GetStartTime().AsTime().After(since) && len(d.GetPendingActivities()) > 0
			})
		}
		cancel := []string{"cancel", b.ID, "--config-file", cfg}
		if i%2 == 1 {
			cancel = append(cancel, "--no-wait")
		}
		s.mustWhestbake(cancel...)
		since = time.Now()
		r := s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
		if !strings.Contains(r.stdout, "Restarted") {
			t.Fatalf("round %d: `bake` right after `cancel` did not restart the bake:\n%s", i, r)
		}
	}
	// Reattaches to the last run.
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")

	// Visibility lags a little behind the runs closing.
	var got map[enums.WorkflowExecutionStatus]int
	waitFor(t, 30*time.Second, "every run of the bake to be listed", func() bool {
		resp, err := s.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowId = '" + bakeapi.BakeWorkflowID(b.ID) + "'",
		})
		if err != nil {
			t.Fatal(err)
		}
		got = map[enums.WorkflowExecutionStatus]int{}
		for _, e := range resp.GetExecutions() {
			got[e.GetStatus()]++
		}
		return len(resp.GetExecutions()) == rounds+1
	})
	if got[enums.WORKFLOW_EXECUTION_STATUS_CANCELED] != rounds ||
		got[enums.WORKFLOW_EXECUTION_STATUS_COMPLETED] != 1 {
		t.Errorf("runs of the bake by status %v, want %d cancelled and the last completed",
			got, rounds)
	}
	datasettest.SameDataset(t, s.download(b), s.localBake(b))
}
