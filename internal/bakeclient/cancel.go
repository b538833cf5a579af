package bakeclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/bakeapi"
)

// Cancellation is a cancel that Temporal accepted. Its JSON is docs/CLI.md's
// whestbake.cancel/v1, with Stopped.
type Cancellation struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
}

// Cancel asks Temporal to cancel bake id, its splits and their running
// slices; finished work stays in S3. A bake that is not running is refused.
func (c *Client) Cancel(ctx context.Context, id string) (Cancellation, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return Cancellation{}, err
	}
	wid := bakeapi.BakeWorkflowID(id)
	desc, err := tc.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return Cancellation{}, noSuchBake(c.cfg.Temporal, id, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if s := info.GetStatus(); s != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return Cancellation{}, fmt.Errorf("bake %s is not running (it %s); nothing to cancel",
			id, stateWord(s))
	}
	if err := tc.CancelWorkflow(ctx, wid, ""); err != nil {
		return Cancellation{}, noSuchBake(c.cfg.Temporal, id, err)
	}
	return Cancellation{ID: id, WorkflowID: wid, RunID: info.GetExecution().GetRunId()}, nil
}

// WaitStopped waits until the cancelled bake's workflow and its split
// workflows are all closed, running slices saving their checkpoints first,
// telling waiting, if set, which still run whenever that changes.
func (c *Client) WaitStopped(ctx context.Context, k Cancellation,
	waiting func(workflowIDs []string),
) error {
	tc, err := c.connect(ctx)
	if err != nil {
		return err
	}
	in, err := startInput(ctx, tc, k.ID, k.RunID)
	if err != nil {
		return err
	}
	return waitStopped(ctx, tc, k.ID, splitNames(in.Splits), waiting)
}

// stoppedPoll is how often waitStopped asks whether the bake's workflows
// are still running.
const stoppedPoll = 250 * time.Millisecond

// waitStopped waits until bake id's workflow and its split workflows are
// all closed. A cancelled bake winds down before it closes: its running
// slices save their checkpoints, a merge stops. Until then a restart could
// neither start the same split workflow IDs nor be sure that nothing of the
// old run still writes. The splits are waited for too, so that the wait
// holds whichever of the bake's workflows closes last.
func waitStopped(ctx context.Context, tc client.Client, id string, splits []string,
	waiting func([]string),
) error {
	ids := []string{bakeapi.BakeWorkflowID(id)}
	for _, s := range splits {
		ids = append(ids, bakeapi.SplitWorkflowID(id, s))
	}
	var said []string
	for {
		var running []string
		for _, wid := range ids {
			d, err := tc.DescribeWorkflowExecution(ctx, wid, "")
			var nf *serviceerror.NotFound
			switch {
			case errors.As(err, &nf):
			case err != nil:
				return fmt.Errorf("waiting for bake %s to stop: %w", id, err)
			case d.GetWorkflowExecutionInfo().GetStatus() ==
				enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
				running = append(running, wid)
			}
		}
		if len(running) == 0 {
			return nil
		}
		if !slices.Equal(running, said) && waiting != nil {
			waiting(running)
		}
		said = running
		if err := sleep(ctx, stoppedPoll); err != nil {
			return err
		}
	}
}

// cancelRequested reports whether the run's history holds a request to
// cancel it: a running bake that is winding down.
func cancelRequested(ctx context.Context, tc client.Client, wid, runID string) (bool, error) {
	it := tc.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return false, err
		}
		if ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED {
			return true, nil
		}
	}
	return false, nil
}

func splitNames(splits []bakeapi.SplitSpec) []string {
	var out []string
	for _, s := range splits {
		out = append(out, s.Name)
	}
	return out
}
