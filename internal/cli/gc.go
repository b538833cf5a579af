package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/store"
)

func newGCCmd() *cobra.Command {
	var force bool
	cmd := starterVerb(&cobra.Command{
		Use:   "gc ID [--force]",
		Short: "Delete what a bake left in S3: intermediates of a completed bake, everything but the record of a failed or cancelled one",
		Long: `Deletes a bake's objects in s3.bucket; a running bake (or any of its split
workflows) is refused. Releases are never touched.

gc deletes only what the Temporal server the bake was started on says is
closed: the bake records that server's cluster and namespace at its first
start, and gc refuses when this config connects to another one (a server or
namespace that does not know the bake proves nothing), or when the bake has
no such record (started by an earlier release). --force skips that proof, for
an operator who knows the bake is not running anywhere.

Of a completed bake, gc deletes the intermediates its steps left (with
bake.keep-intermediates, or written by a slice attempt that outlived its
slice): identity blocks, per-MLP results, checkpoints, slice partials and
merged splits. Its record, seeds files and final dataset stay, so
` + "`dataset download bake:ID`" + ` still works. The same holds for a bake this Temporal
server no longer knows (its history expired) whose final dataset is committed.

Of a failed, cancelled, terminated or timed-out bake, gc deletes everything but
its record (which keeps the ID bound to its spec): starting it again with
` + "`whestbake bake --id ID`" + ` recomputes it from scratch.

gc holds the bake's lock while it deletes, commit markers first: a
` + "`whestbake bake`" + ` of the same ID is refused until gc is done, and gc is refused
while such a start stores its inputs. A gc that dies releases it within 10
minutes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := settings.CheckBakeID(id); err != nil {
				return cmdline.Usagef("bake ID %v", err)
			}
			cfg, err := starterConfig(cmd, nil)
			if err != nil {
				return err
			}
			return runGC(cmd.Context(), cfg, id, force, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	})
	cmd.Flags().BoolVar(&force, "force", false, "delete without proving that the bake is closed on the Temporal cluster and namespace it was started in")
	return cmd
}

func runGC(ctx context.Context, cfg settings.Config, id string, force bool, out, errOut io.Writer) error {
	if err := preflight.Store(cfg); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.StoreConfig(), cfg.S3.Bucket)
	if err != nil {
		return err
	}
	c, err := dial(ctx, cfg, errOut)
	if err != nil {
		return err
	}
	defer c.Close()
	b := keys.Bake(id)

	// Step 1. Nothing of the bake may run, nor start until gc is done: a
	// slice still writing would leave objects behind, or fail for want of
	// the ones deleted. Only the server and namespace the bake was started
	// in can say so, and its lock keeps `whestbake bake` out meanwhile.
	if !force {
		if err := checkStartedHere(ctx, st, c, cfg, id); err != nil {
			return err
		}
	}
	g := &gcRun{c: c, cfg: cfg, st: st, id: id, lock: newLock(c, cfg.Temporal.Namespace, id, "gc")}
	if err := g.lock.take(ctx, "nothing was deleted"); err != nil {
		return err
	}
	defer g.lock.releaseOrWarn(errOut)
	status, err := g.closed(ctx)
	if err != nil {
		return err
	}

	// Step 2. What stays: a completed bake's own data, or a failed one's record.
	where := fmt.Sprintf("s3://%s/%s", cfg.S3.Bucket, b.Prefix())
	datasetDone, err := st.Exists(ctx, keys.Manifest(b.Dataset()))
	if err != nil {
		return err
	}
	completed := status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED ||
		(status == enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED && datasetDone)
	keep := func(key string) bool { return key == b.Record() || key == b.StartedIn() }
	if completed {
		keep = func(key string) bool { return !b.Intermediate(key) }
	}
	gone, err := g.delete(ctx, keep)
	if err != nil && gone.Objects > 0 {
		return fmt.Errorf("%w (gc deleted %d objects, %s, of bake %s before it stopped, commit markers first: "+
			"a restart recomputes what is gone)", err, gone.Objects, bake.FormatBytes(gone.Bytes), id)
	}
	if err != nil {
		return err
	}
	left, err := st.Usage(ctx, b.Prefix())
	if err != nil {
		return err
	}
	if gone.Objects == 0 && left.Objects == 0 {
		return fmt.Errorf("bake %s has nothing in %s: check the ID with `whestbake list` and s3.bucket", id, where)
	}

	// Step 3. Say what happened.
	how := "it " + statusWord(status)
	if status == enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
		how = "its namespace no longer holds its history"
		if force {
			how = "this Temporal namespace does not know it; --force"
		}
	}
	fmt.Fprintf(out, "Deleted %d objects (%s) of bake %s (%s) in %s\n", gone.Objects, bake.FormatBytes(gone.Bytes), id, how, where)
	if completed {
		fmt.Fprintf(out, "Kept its record, seeds and final dataset: %d objects, %s.\n", left.Objects, bake.FormatBytes(left.Bytes))
	} else {
		fmt.Fprintf(out, "Kept its record only; `whestbake bake --id %s` with the same config would recompute it from scratch.\n", id)
	}
	return nil
}

// gcRun is one gc of bake id, holding its lock.
type gcRun struct {
	c    client.Client
	cfg  settings.Config
	st   *store.Store
	id   string
	lock *bakeLock
}

// closed refuses unless the bake and its split workflows are closed, and
// returns the bake's status (UNSPECIFIED: the server does not know it).
func (g *gcRun) closed(ctx context.Context) (enums.WorkflowExecutionStatus, error) {
	status, err := bakeStatus(ctx, g.c, g.id)
	if err != nil {
		return 0, err
	}
	return status, refuseRunning(ctx, g.c, g.cfg, g.id, status)
}

// delete removes what keep does not keep of the bake's objects: the
// commit markers first (keys.Marker), so that a gc cut short leaves only
// uncommitted objects, which a restart writes again; then the rest.
func (g *gcRun) delete(ctx context.Context, keep func(string) bool) (store.Tally, error) {
	prefix := keys.Bake(g.id).Prefix()
	markers, err := g.st.DeleteWhere(ctx, store.Deletion{Prefix: prefix, Batch: g.batch,
		Keep: func(key string) bool { return keep(key) || !keys.Marker(key) }})
	if err != nil {
		return markers, err
	}
	rest, err := g.st.DeleteWhere(ctx, store.Deletion{Prefix: prefix, Keep: keep, Batch: g.batch})
	return store.Tally{Objects: markers.Objects + rest.Objects, Bytes: markers.Bytes + rest.Bytes}, err
}

// batch runs one bulk deletion, remove: under the lock, renewed when it
// nears its end, and once more checking that the bake has not started
// (only a start that takes no lock could: a reset in the Web UI, the
// temporal CLI, an earlier whestbake). The request must end before the
// lock does.
func (g *gcRun) batch(ctx context.Context, remove func(context.Context) error) error {
	if g.lock.left() < lockRenewal {
		if err := g.lock.release(); err != nil {
			return err
		}
		if err := g.lock.take(ctx, "gc stopped"); err != nil {
			return err
		}
		if _, err := g.closed(ctx); err != nil {
			return err
		}
	} else if status, err := bakeStatus(ctx, g.c, g.id); err != nil {
		return err
	} else if status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("bake %s started while gc was deleting, by something that does not take whestbake's lock "+
			"(a reset or a start in the Web UI or the temporal CLI, or an earlier whestbake): cancel it with `whestbake cancel %s`, "+
			"then run gc again or restart it", g.id, g.id)
	}
	rctx, cancel := context.WithDeadline(ctx, g.lock.ends.Add(-lockMargin))
	defer cancel()
	return remove(rctx)
}

// checkStartedHere refuses unless c is connected to the cluster and
// namespace bake id was started in: only there does "closed" or "unknown"
// mean that nothing of the bake runs.
func checkStartedHere(ctx context.Context, st *store.Store, c client.Client, cfg settings.Config, id string) error {
	was, err := readStartedIn(ctx, st, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("bake %s has no record of the Temporal cluster and namespace it was started in (s3://%s/%s: a bake started by an earlier release, or none of this bucket), "+
			"so gc cannot prove that it is not running; nothing was deleted: check `whestbake status %s` against the server that runs it, then run gc --force",
			id, cfg.S3.Bucket, keys.Bake(id).StartedIn(), id)
	case err != nil:
		return fmt.Errorf("bake %s: %w; nothing was deleted: gc cannot tell where the bake runs (run gc --force once you know it is not running)", id, err)
	}
	here, err := connectedTo(ctx, c, cfg.Temporal.Namespace)
	if err != nil {
		return err
	}
	if !was.same(here) {
		return fmt.Errorf("bake %s was started in %s, but this config connects to %s, which cannot say whether the bake still runs; nothing was deleted: "+
			"point temporal.address and temporal.namespace at the bake's server (or run gc --force if you know it is not running)", id, was, here)
	}
	return nil
}

// bakeStatus is the status of the bake's workflow, UNSPECIFIED when this
// server has no such workflow.
func bakeStatus(ctx context.Context, c client.Client, id string) (enums.WorkflowExecutionStatus, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(id), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED, nil
	case err != nil:
		return 0, err
	}
	return desc.GetWorkflowExecutionInfo().GetStatus(), nil
}

// refuseRunning refuses a running bake, and a bake whose split workflows
// still wind down after it was cancelled.
func refuseRunning(ctx context.Context, c client.Client, cfg settings.Config, id string, status enums.WorkflowExecutionStatus) error {
	fix := fmt.Sprintf("gc deletes only what no workflow uses: cancel it with `whestbake cancel %s`, wait until `whestbake status %s` shows it ended, then run gc again", id, id)
	if status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("bake %s is running; %s", id, fix)
	}
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: cfg.Temporal.Namespace,
		Query: fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'", bakeapi.BakeIDAttribute, id)})
	if err != nil {
		return fmt.Errorf("listing the workflows of bake %s: %w", id, err)
	}
	if ex := resp.GetExecutions(); len(ex) > 0 {
		return fmt.Errorf("workflow %s of bake %s is still running; %s", ex[0].GetExecution().GetWorkflowId(), id, fix)
	}
	return nil
}
