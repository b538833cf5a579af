package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/bakeapi"
)

func newCancelCmd() *cobra.Command {
	var noWait bool
	cmd := starterVerb(&cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a running bake and wait until it has stopped (its splits and running slices are cancelled; finished work stays in S3)",
		Args:  bakeIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := connect(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			id, wid := args[0], bakeapi.BakeWorkflowID(args[0])
			desc, err := c.DescribeWorkflowExecution(ctx, wid, "")
			if err != nil {
				return noSuchBake(cfg.Temporal, id, err)
			}
			if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return fmt.Errorf("bake %s is not running (it %s); nothing to cancel", id, statusWord(s))
			}
			if err := c.CancelWorkflow(ctx, wid, ""); err != nil {
				return noSuchBake(cfg.Temporal, id, err)
			}
			if noWait {
				fmt.Fprintf(out, "Cancellation of bake %s requested; `whestbake watch %s` shows it wind down. Starting it again with the same ID waits until it has stopped, then reuses every finished MLP.\n", id, id)
				return nil
			}
			fmt.Fprintf(out, "Cancellation of bake %s requested.\n", id)
			in, err := newBakeWatcher(c, cfg.Temporal, id).startInput(ctx, wid, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId())
			if err != nil {
				return err
			}
			if err := waitStopped(ctx, c, id, splitNames(in.Splits), out); err != nil {
				return err
			}
			fmt.Fprintf(out, "Bake %s has stopped. Starting it again with the same ID reuses every finished MLP.\n", id)
			return nil
		},
	})
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "return once the cancellation is requested, without waiting for the running slices to save their checkpoints and stop")
	return cmd
}

// stoppedPoll is how often waitStopped asks whether the bake's workflows
// are still running.
const stoppedPoll = 250 * time.Millisecond

// waitStopped waits until bake id's workflow and its split workflows are
// all closed. A cancelled bake winds down before it closes: its running
// slices save their checkpoints, a merge stops. Until then a restart could
// neither start the same split workflow IDs nor be sure that nothing of the
// old run still writes; bakes started before the workflows waited for their
// splits (workflows.drainChange) close before their splits do, hence the
// splits are waited for too.
func waitStopped(ctx context.Context, c client.Client, id string, splits []string, out io.Writer) error {
	ids := []string{bakeapi.BakeWorkflowID(id)}
	for _, s := range splits {
		ids = append(ids, bakeapi.SplitWorkflowID(id, s))
	}
	said := ""
	for {
		var running []string
		for _, wid := range ids {
			d, err := c.DescribeWorkflowExecution(ctx, wid, "")
			var nf *serviceerror.NotFound
			switch {
			case errors.As(err, &nf):
			case err != nil:
				return fmt.Errorf("waiting for bake %s to stop: %w", id, err)
			case d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
				running = append(running, wid)
			}
		}
		if len(running) == 0 {
			return nil
		}
		if now := strings.Join(running, ", "); now != said {
			fmt.Fprintf(out, "Waiting for %s to stop (running slices save their checkpoints first; a control worker must be running)…\n", now)
			said = now
		}
		if err := sleep(ctx, stoppedPoll); err != nil {
			return err
		}
	}
}

// cancelRequested reports whether the run's history holds a request to
// cancel it: a running bake that is winding down.
func cancelRequested(ctx context.Context, c client.Client, wid, runID string) (bool, error) {
	it := c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
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
