package bakeclient

import (
	"context"
	"errors"
	"fmt"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/store"
)

// GCInput says which bake gc collects.
type GCInput struct {
	ID string
	// Force skips the proof that the bake is closed on the Temporal cluster
	// and namespace it was started in.
	Force bool
}

// GCOutput is what gc deleted and kept. Its JSON is docs/CLI.md's
// whestbake.gc/v1.
type GCOutput struct {
	ID       string `json:"id"`
	Location string `json:"location"` // s3://bucket/prefix of the bake's objects
	// BakeState is the bake workflow's status on this server, Status.State,
	// or "unknown" when its namespace does not know it: its history
	// expired, or, when Forced, it ran elsewhere.
	BakeState string `json:"bake_state"`
	Forced    bool   `json:"forced"`
	// Completed: the bake's record, seeds files and final dataset were
	// kept; otherwise its record alone.
	Completed bool  `json:"completed"`
	Deleted   Usage `json:"deleted"`
	Kept      Usage `json:"kept"`
	// AbortedUploads counts the incomplete multipart uploads gc aborted
	// under the bake's prefix and at its release; see gcuploads.go.
	AbortedUploads int `json:"aborted_uploads"`
}

// Usage counts objects in S3 and their bytes.
type Usage struct {
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

// UnknownState is GCOutput.BakeState for a bake the namespace does not know.
const UnknownState = "unknown"

// GC deletes what a bake left in S3, refusing while it or any of its split
// workflows runs: of a completed bake its intermediates, keeping record,
// seeds and dataset; of a failed or cancelled bake everything but its
// record; and of either the incomplete uploads its killed workers left.
// It holds the bake's lock while it deletes, commit markers first.
func (c *Client) GC(ctx context.Context, in GCInput) (GCOutput, error) {
	if err := preflight.Store(c.cfg); err != nil {
		return GCOutput{}, err
	}
	st, err := store.Open(ctx, c.cfg.StoreConfig(), c.cfg.S3.Bucket)
	if err != nil {
		return GCOutput{}, err
	}
	tc, err := c.connect(ctx)
	if err != nil {
		return GCOutput{}, err
	}
	id := in.ID
	b := keys.Bake(id)

	// Step 1. Nothing of the bake may run, nor start until gc is done: a
	// slice still writing would leave objects behind, or fail for want of
	// the ones deleted. Only the server and namespace the bake was started
	// in can say so, and its lock keeps `whestbake bake` out meanwhile.
	if !in.Force {
		if err := checkStartedHere(ctx, st, tc, c.cfg, id); err != nil {
			return GCOutput{}, err
		}
	}
	g := &gcRun{
		temporal:  tc,
		cfg:       c.cfg,
		artifacts: st,
		bakeID:    id,
		lock:      newLock(tc, c.cfg.Temporal.Namespace, id, "gc"),
	}
	if err := g.lock.take(ctx, "nothing was deleted"); err != nil {
		return GCOutput{}, err
	}
	defer g.lock.releaseOrWarn(c.log)
	status, err := g.closed(ctx)
	if err != nil {
		return GCOutput{}, err
	}

	// Step 2. What stays: a completed bake's own data, or a failed one's record.
	out := GCOutput{
		ID:        id,
		Location:  fmt.Sprintf("s3://%s/%s", c.cfg.S3.Bucket, b.Prefix()),
		BakeState: stateWord(status),
		Forced:    in.Force,
	}
	datasetDone, err := st.Exists(ctx, keys.Manifest(b.Dataset()))
	if err != nil {
		return out, err
	}
	if status == enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
		out.BakeState = UnknownState
	}
	out.Completed = status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED ||
		(status == enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED && datasetDone)
	keep := func(key string) bool { return key == b.Record() || key == b.StartedIn() }
	if out.Completed {
		keep = func(key string) bool { return !b.Intermediate(key) }
	}
	// Step 3. Delete, abort what uploads are left, and count what stays.
	return out, g.collect(ctx, &out, keep)
}

// collect deletes what keep does not keep of the bake's objects and aborts
// the incomplete uploads left under the bake and at its own releases, and
// fills in out's counts. The uploads are found first: the deletion may take
// the dataset a release is compared with.
func (g *gcRun) collect(ctx context.Context, out *GCOutput, keep func(string) bool) error {
	prefix := keys.Bake(g.bakeID).Prefix()
	releases, err := g.ownReleases(ctx)
	if err != nil {
		return err
	}
	gone, err := g.delete(ctx, keep)
	if err != nil && gone.Objects > 0 {
		return fmt.Errorf("%w (gc deleted %d objects, %s, of bake %s before it stopped, "+
			"commit markers first: a restart recomputes what is gone)",
			err, gone.Objects, bytesize.Format(gone.Bytes), g.bakeID)
	}
	if err != nil {
		return err
	}
	if out.AbortedUploads, err = g.abortUploads(ctx, releases); err != nil {
		return err
	}
	left, err := g.artifacts.Usage(ctx, prefix)
	if err != nil {
		return err
	}
	if gone.Objects == 0 && left.Objects == 0 && out.AbortedUploads == 0 {
		return fmt.Errorf("bake %s has nothing in %s: "+
			"check the ID with `whestbake list` and s3.bucket", g.bakeID, out.Location)
	}
	out.Deleted = Usage{Objects: gone.Objects, Bytes: gone.Bytes}
	out.Kept = Usage{Objects: left.Objects, Bytes: left.Bytes}
	return nil
}

// gcRun is one gc of bake id, holding its lock.
type gcRun struct {
	temporal  client.Client
	cfg       settings.Config
	artifacts *store.Store
	bakeID    string
	lock      *bakeLock
}

// closed refuses unless the bake and its split workflows are closed, and
// returns the bake's status, UNSPECIFIED when the server does not know it.
func (g *gcRun) closed(ctx context.Context) (enums.WorkflowExecutionStatus, error) {
	status, err := bakeStatus(ctx, g.temporal, g.bakeID)
	if err != nil {
		return 0, err
	}
	return status, refuseRunning(ctx, g.temporal, g.cfg, g.bakeID, status)
}

// delete removes what keep does not keep of the bake's objects: the
// commit markers first, keys.Marker, so that a gc cut short leaves only
// uncommitted objects, which a restart writes again; then the rest.
func (g *gcRun) delete(ctx context.Context, keep func(string) bool) (store.Tally, error) {
	prefix := keys.Bake(g.bakeID).Prefix()
	markers, err := g.artifacts.DeleteWhere(ctx, store.Deletion{
		Prefix: prefix,
		Batch:  g.batch,
		Keep:   func(key string) bool { return keep(key) || !keys.Marker(key) },
	})
	if err != nil {
		return markers, err
	}
	rest, err := g.artifacts.DeleteWhere(ctx, store.Deletion{
		Prefix: prefix,
		Keep:   keep,
		Batch:  g.batch,
	})
	return store.Tally{
		Objects: markers.Objects + rest.Objects,
		Bytes:   markers.Bytes + rest.Bytes,
	}, err
}

// batch runs one bulk deletion, remove: under the lock, renewed when it
// nears its end, and once more checking that the bake has not started.
// Only a start that takes no lock could start it: a reset in the Web UI,
// the temporal CLI, an earlier whestbake. The request must end before the
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
	} else if status, err := bakeStatus(ctx, g.temporal, g.bakeID); err != nil {
		return err
	} else if status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("bake %s started while gc was deleting, by something that does not take "+
			"whestbake's lock (a reset or a start in the Web UI or the temporal CLI, "+
			"or an earlier whestbake): "+
			"cancel it with `whestbake cancel %s`, then run gc again or restart it",
			g.bakeID, g.bakeID)
	}
	rctx, cancel := context.WithDeadline(ctx, g.lock.ends.Add(-lockMargin))
	defer cancel()
	return remove(rctx)
}

// checkStartedHere refuses unless c is connected to the cluster and
// namespace bake id was started in: only there does "closed" or "unknown"
// mean that nothing of the bake runs.
func checkStartedHere(ctx context.Context, st *store.Store, c client.Client, cfg settings.Config,
	id string,
) error {
	was, err := readStartedIn(ctx, st, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("bake %s has no record of the Temporal cluster and namespace it was "+
			"started in (s3://%s/%s: a bake started by an earlier release, "+
			"or none of this bucket), "+
			"so gc cannot prove that it is not running; nothing was deleted: "+
			"check `whestbake status %s` against the server that runs it, then run gc --force",
			id, cfg.S3.Bucket, keys.Bake(id).StartedIn(), id)
	case err != nil:
		return fmt.Errorf("bake %s: %w; nothing was deleted: gc cannot tell where the bake runs "+
			"(run gc --force once you know it is not running)", id, err)
	}
	here, err := connectedTo(ctx, c, cfg.Temporal.Namespace)
	if err != nil {
		return err
	}
	if !was.same(here) {
		return fmt.Errorf("bake %s was started in %s, but this config connects to %s, "+
			"which cannot say whether the bake still runs; nothing was deleted: "+
			"point temporal.address and temporal.namespace at the bake's server "+
			"(or run gc --force if you know it is not running)",
			id, was, here)
	}
	return nil
}

// bakeStatus is the status of the bake's workflow, UNSPECIFIED when this
// server has no such workflow.
func bakeStatus(ctx context.Context, c client.Client, id string,
) (enums.WorkflowExecutionStatus, error) {
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
func refuseRunning(ctx context.Context, c client.Client, cfg settings.Config, id string,
	status enums.WorkflowExecutionStatus,
) error {
	fix := fmt.Sprintf("gc deletes only what no workflow uses: "+
		"cancel it with `whestbake cancel %s`, "+
		"wait until `whestbake status %s` shows it ended, then run gc again", id, id)
	if status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("bake %s is running; %s", id, fix)
	}
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: cfg.Temporal.Namespace,
		Query: fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'",
			bakeapi.BakeIDAttribute, id),
	})
	if err != nil {
		return fmt.Errorf("listing the workflows of bake %s: %w", id, err)
	}
	if ex := resp.GetExecutions(); len(ex) > 0 {
		return fmt.Errorf("workflow %s of bake %s is still running; %s",
			ex[0].GetExecution().GetWorkflowId(), id, fix)
	}
	return nil
}
