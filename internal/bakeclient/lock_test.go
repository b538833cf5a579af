package bakeclient

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/settings"
)

// A bake's lock on a real Temporal server: one holder at a time, a refusal
// that names the holder, a 10-minute bound for a holder that died, a gc
// that renews it before it ends and stops when the bake starts without it.
func TestBakeLockOnTemporal(t *testing.T) {
	c := devtest.Client(t, devtest.StartTemporal(t, devtest.Options(t)))
	ctx := context.Background()
	describe := func(t *testing.T, runID string) enums.WorkflowExecutionStatus {
		t.Helper()
		d, err := c.DescribeWorkflowExecution(ctx, lockWorkflowID("l1"), runID)
		if err != nil {
			t.Fatal(err)
		}
		return d.GetWorkflowExecutionInfo().GetStatus()
	}

	t.Run("one holder at a time", func(t *testing.T) {
		gc := newLock(c, devstack.Namespace, "l1", "gc")
		if err := gc.take(ctx, "nothing was deleted"); err != nil {
			t.Fatal(err)
		}
		d, err := c.DescribeWorkflowExecution(ctx, lockWorkflowID("l1"), gc.runID)
		timeout := d.GetExecutionConfig().GetWorkflowExecutionTimeout()
		if err != nil || timeout.AsDuration() != lockTTL {
			t.Fatalf("the lock's execution timeout: %v (%v), want %s: "+
				"a holder that dies must not lock the bake for good", timeout, err, lockTTL)
		}
		start := newLock(c, devstack.Namespace, "l1", "bake")
		err = start.take(ctx, "nothing was started")
		for _, want := range []string{
			"bake l1 is being garbage-collected: `whestbake gc` on ",
			"has held its lock since ",
			"nothing was started: run `whestbake bake` again once it has finished",
			"the lock ends by itself at ",
			"temporal workflow terminate --workflow-id bake/l1/lock --namespace default",
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("a start while gc holds the lock: %v, want it to say %q", err, want)
			}
		}
		if err := gc.release(); err != nil {
			t.Fatal(err)
		}
		if s := describe(t, gc.runID); s != enums.WORKFLOW_EXECUTION_STATUS_TERMINATED {
			t.Errorf("the released lock is %s, want terminated", s)
		}
		if err := start.take(ctx, "nothing was started"); err != nil {
			t.Fatalf("a start once gc released the lock: %v", err)
		}
		err = newLock(c, devstack.Namespace, "l1", "gc").take(ctx, "nothing was deleted")
		const refused = "nothing was deleted: gc deletes only what no bake uses"
		if err == nil ||
			!strings.Contains(err.Error(), "bake l1 is being started: `whestbake bake` on ") ||
			!strings.Contains(err.Error(), refused) {
			t.Errorf("gc while a start holds the lock: %v", err)
		}
		if err := start.release(); err != nil {
			t.Fatal(err)
		}
		if err := start.release(); err != nil { // twice: the lock had ended
			t.Errorf("releasing an ended lock: %v", err)
		}
	})

	// A lock started without a timeout, by another tool or by hand, was
	// said to end by itself at its own start, already past.
	t.Run("a lock without a timeout never ends by itself", func(t *testing.T) {
		forged := client.StartWorkflowOptions{
			ID:        lockWorkflowID("l2"),
			TaskQueue: lockQueue,
			Memo:      map[string]any{"holder": lockHolder{Verb: "gc", Host: "elsewhere", PID: 1}},
		}
		run, err := c.ExecuteWorkflow(ctx, forged, lockWorkflowType)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.TerminateWorkflow(ctx, forged.ID, run.GetRunID(), "test over") }()
		err = newLock(c, devstack.Namespace, "l2", "bake").take(ctx, "nothing was started")
		if err == nil || strings.Contains(err.Error(), "ends by itself at") ||
			!strings.Contains(err.Error(), "the lock never ends by itself") {
			t.Errorf("a start while a lock without a timeout is held: %v, "+
				"want it to say that the lock never ends by itself", err)
		}
	})

	t.Run("gc renews its lock before it ends", func(t *testing.T) {
		g := &gcRun{
			temporal: c,
			cfg:      settings.Default(),
			bakeID:   "l1",
			lock:     newLock(c, devstack.Namespace, "l1", "gc"),
		}
		if err := g.lock.take(ctx, "nothing was deleted"); err != nil {
			t.Fatal(err)
		}
		defer g.lock.releaseOrWarn(io.Discard)
		old := g.lock.runID
		g.lock.ends = time.Now().Add(lockRenewal - time.Second)
		var deadline time.Time
		err := g.batch(ctx, func(ctx context.Context) error {
			deadline, _ = ctx.Deadline()
			return nil
		})
		if err != nil || g.lock.runID == old {
			t.Fatalf("batch near the lock's end: %v, run %s (was %s), want a new lock",
				err, g.lock.runID, old)
		}
		if s := describe(t, old); s != enums.WORKFLOW_EXECUTION_STATUS_TERMINATED {
			t.Errorf("the renewed lock's old run is %s, want terminated", s)
		}
		want := time.Now().Add(lockTTL - lockMargin)
		if deadline.After(want) || deadline.Before(want.Add(-time.Minute)) {
			t.Errorf("the request's deadline is %s, want about %s: "+
				"a minute before the new lock ends", deadline, want)
		}
	})

	t.Run("gc stops when the bake starts without the lock", func(t *testing.T) {
		g := &gcRun{
			temporal: c,
			cfg:      settings.Default(),
			bakeID:   "l1",
			lock:     newLock(c, devstack.Namespace, "l1", "gc"),
		}
		if err := g.lock.take(ctx, "nothing was deleted"); err != nil {
			t.Fatal(err)
		}
		defer g.lock.releaseOrWarn(io.Discard)
		// As the Web UI or the temporal CLI would start it, with no lock.
		unlocked := client.StartWorkflowOptions{
			ID:        bakeapi.BakeWorkflowID("l1"),
			TaskQueue: "nobody",
		}
		if _, err := c.ExecuteWorkflow(ctx, unlocked, bakeapi.BakeWorkflowName); err != nil {
			t.Fatal(err)
		}
		removed := false
		err := g.batch(ctx, func(context.Context) error { removed = true; return nil })
		if removed || err == nil ||
			!strings.Contains(err.Error(), "bake l1 started while gc was deleting") {
			t.Errorf("batch of a bake that started: removed %v, %v", removed, err)
		}
	})
}
