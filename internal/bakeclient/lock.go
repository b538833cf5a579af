package bakeclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/safetext"
)

// A bake's lock keeps `whestbake gc` and a start of the same bake apart: gc
// must not delete the inputs a start has just uploaded, nor a start begin
// while gc deletes. It is a workflow in the bake's ID space, bake/<id>/lock,
// that no worker runs: Temporal refuses to start a workflow ID that is
// running, under conflict policy Fail, atomically, so of two that start it
// one gets it and the other is told who has it. It ends when its holder
// terminates it, or at its execution timeout when its holder died: a
// crashed gc or starter locks the bake for lockTTL at most, and nothing in
// S3 is left to clean up. docs/TEMPORAL.md, "gc versus a restart", has the
// whole argument.
const (
	lockWorkflowType = "BakeLock"
	// lockQueue is the task queue of the lock workflows, which no worker
	// polls: a lock is never run, only started and terminated.
	lockQueue = "whestbake-locks"
	lockTTL   = 10 * time.Minute
	// A deletion request must end lockMargin before the lock does, and gc
	// takes a fresh lock when less than lockRenewal of it is left.
	lockMargin  = time.Minute
	lockRenewal = 5 * time.Minute
)

// lockWorkflowID is the ID of bake bakeID's lock. Bake IDs hold no "/", so
// no other bake's workflow, nor a split's bake/<id>/split/<name>, has it.
func lockWorkflowID(bakeID string) string { return bakeapi.BakeWorkflowID(bakeID) + "/lock" }

// lockHolder says who holds a lock, in the lock workflow's memo.
type lockHolder struct {
	Verb string `json:"verb"` // gc or bake
	Host string `json:"host"`
	PID  int    `json:"pid"`
}

func (h lockHolder) String() string {
	if h.Verb == "" {
		return "a process whose lock names no holder"
	}
	return fmt.Sprintf("`whestbake %s` on %s (pid %d)", h.Verb, h.Host, h.PID)
}

// bakeLock is a lock this process holds.
type bakeLock struct {
	temporal  client.Client
	namespace string
	bake      string
	holder    lockHolder
	runID     string
	// ends is when the lock ends at the earliest: the server's timeout
	// counts from its start, which came after the moment ends counts from.
	ends time.Time
}

// newLock is bake id's lock, not yet taken, for verb gc or bake of this
// process.
func newLock(c client.Client, namespace, id, verb string) *bakeLock {
	host, _ := os.Hostname()
	return &bakeLock{
		temporal:  c,
		namespace: namespace,
		bake:      id,
		holder:    lockHolder{Verb: verb, Host: host, PID: os.Getpid()},
	}
}

// take takes the lock, or returns an error that names its holder, since
// when it holds it, what this process did for want of it, outcome, and how
// to go on.
func (l *bakeLock) take(ctx context.Context, outcome string) error {
	id := l.bake
	for try := 1; ; try++ {
		before := time.Now()
		run, err := l.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:                       lockWorkflowID(id),
			TaskQueue:                lockQueue,
			WorkflowExecutionTimeout: lockTTL,
			WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
			WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			Memo:                     map[string]any{"holder": l.holder},
			StaticSummary:            fmt.Sprintf("lock of bake %s, held by %s", id, l.holder),
			// A held lock is an error, not a handle on the holder's run.
			WorkflowExecutionErrorWhenAlreadyStarted: true,
		}, lockWorkflowType)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		var busy *serviceerror.ResourceExhausted
		switch {
		case err == nil:
			l.runID = run.GetRunID()
			l.ends = before.Add(lockTTL)
			return nil
		case errors.As(err, &started):
			held, err := describeLock(ctx, l.temporal, id)
			if err != nil {
				return err
			}
			if held.running || try == 3 {
				return held.refusal(l.holder.Verb, id, l.namespace, outcome)
			}
			// Released between the start and the describe: try again.
		case errors.As(err, &busy) && try < 3:
			// A server that limits how soon a workflow ID is reused:
			// history.workflowIdReuseMinimalInterval, 1 s.
			if err := sleep(ctx, time.Second); err != nil {
				return err
			}
		default:
			return fmt.Errorf("taking the lock of bake %s (workflow %s): %w; %s",
				id, lockWorkflowID(id), err, outcome)
		}
	}
}

// release ends the lock, so that what it kept out may run at once. A lock
// that cannot be ended now ends by itself at its timeout.
func (l *bakeLock) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reason := "released by " + l.holder.String()
	err := l.temporal.TerminateWorkflow(ctx, lockWorkflowID(l.bake), l.runID, reason)
	var nf *serviceerror.NotFound
	if err == nil || errors.As(err, &nf) { // NotFound: it timed out already
		return nil
	}
	return fmt.Errorf("releasing the lock of bake %s (workflow %s): %w; it ends by itself by %s",
		l.bake, lockWorkflowID(l.bake), err, l.ends.Add(time.Minute).Local().Format(time.DateTime))
}

// releaseOrWarn releases l, telling errOut when it could not, in the
// server's words escaped by safetext.
func (l *bakeLock) releaseOrWarn(errOut io.Writer) {
	if err := l.release(); err != nil {
		fmt.Fprintf(errOut, "warning: %s\n", strings.Join(safetext.ErrorLines(err), "\n"))
	}
}

// left is how long the lock still certainly holds.
func (l *bakeLock) left() time.Duration { return time.Until(l.ends) }

// heldLock is what the server says of a lock someone else took.
type heldLock struct {
	holder lockHolder
	since  time.Time
	// ends is when the server ends the lock, zero for a lock started
	// without a timeout. whestbake never starts one: its locks end at lockTTL.
	ends    time.Time
	running bool
}

// describeLock reads bake id's lock as the server has it.
func describeLock(ctx context.Context, c client.Client, id string) (heldLock, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, lockWorkflowID(id), "")
	if err != nil {
		return heldLock{}, fmt.Errorf("reading the lock of bake %s (workflow %s): %w",
			id, lockWorkflowID(id), err)
	}
	info := desc.GetWorkflowExecutionInfo()
	h := heldLock{
		since:   info.GetStartTime().AsTime(),
		running: info.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING,
	}
	if ttl := desc.GetExecutionConfig().GetWorkflowExecutionTimeout().AsDuration(); ttl > 0 {
		h.ends = h.since.Add(ttl)
	}
	if p := info.GetMemo().GetFields()["holder"]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &h.holder)
	}
	return h, nil
}

// refusal is the error of verb when h holds bake id's lock: who holds it,
// since when, what verb did for want of it, outcome, and how to go on.
func (h heldLock) refusal(verb, id, namespace, outcome string) error {
	var what, next string
	switch {
	case verb == "bake" && h.holder.Verb == "gc":
		what = fmt.Sprintf("bake %s is being garbage-collected: %s", id, h.holder)
	case verb == "bake":
		what = fmt.Sprintf("bake %s is being started by another process: %s", id, h.holder)
	case h.holder.Verb == "bake":
		what = fmt.Sprintf("bake %s is being started: %s", id, h.holder)
	default:
		what = fmt.Sprintf("bake %s is being garbage-collected by another gc: %s", id, h.holder)
	}
	switch {
	case verb == "bake":
		next = "run `whestbake bake` again once it has finished"
	case h.holder.Verb == "bake":
		next = "gc deletes only what no bake uses: once the bake has started, " +
			"cancel it with `whestbake cancel " + id + "`, then run gc again"
	default:
		next = "let that gc finish"
	}
	return fmt.Errorf("%s has held its lock since %s (%s ago); %s: %s. "+
		"If that process is gone (killed, or its host lost), %s, "+
		"or end it at once with `temporal workflow terminate --workflow-id %s --namespace %s` "+
		"(or Terminate in the Web UI): it is a workflow that no worker runs",
		what, h.since.Local().Format(time.DateTime), FormatDuration(time.Since(h.since)),
		outcome, next, h.ending(time.Now()), lockWorkflowID(id), namespace)
}

// ending says when the lock ends by itself, seen at now.
func (h heldLock) ending(now time.Time) string {
	switch {
	case h.ends.IsZero():
		return fmt.Sprintf("the lock never ends by itself: it was started without a timeout, "+
			"so not by whestbake, whose locks end after %s", FormatDuration(lockTTL))
	case !h.ends.After(now):
		return fmt.Sprintf("the lock timed out at %s and ends as soon as the server gets to it",
			h.ends.Local().Format(time.DateTime))
	}
	return "the lock ends by itself at " + h.ends.Local().Format(time.DateTime)
}
