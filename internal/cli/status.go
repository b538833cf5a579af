package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enums "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/settings"
)

func newStatusCmd() *cobra.Command {
	return starterVerb(&cobra.Command{
		Use:   "status ID",
		Short: "Show a bake: stage, per-split progress, ETA, pending activities with heartbeat details, result or failure",
		Args:  bakeIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := connect(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			w := newBakeWatcher(c, cfg.Temporal, args[0])
			w.counts = true
			st, err := w.collect(cmd.Context())
			if err != nil {
				return err
			}
			printStatus(cmd.OutOrStdout(), cfg, st, time.Now())
			return st.exitError()
		},
	})
}

// queryTimeout bounds a progress query: it needs a running control worker,
// and status must still answer (from Describe alone) when there is none.
const queryTimeout = 2 * time.Second

// bakeState is everything status, watch and bake --wait show.
type bakeState struct {
	ID, RunID   string
	Status      enums.WorkflowExecutionStatus
	Stage       string
	Start, End  time.Time // End is zero while running
	Input       *bakeapi.BakeInput
	Splits      []splitState
	Pending     []pendingActivity
	Result      *bakeapi.BakeOutput
	Failure     error
	QueryFailed bool // no live progress: no control worker answered
	// Stopped are the bake workflow's own activities (seeds, combine, push)
	// that were running when it ended without completing.
	Stopped []openActivity
}

type splitState struct {
	bakeapi.SplitProgress
	Running []bakeapi.SliceProgress // heartbeat details of running slices
	// Hist is the split workflow's history, once it has closed (or always
	// for status); nil when not read.
	Hist *runHistory
	// least is the most done() showed before (keepDone); carried says the
	// counts are more than this run's own, carried over from a refresh
	// before or from the bake's earlier runs.
	least   float64
	carried bool
}

// done estimates finished MLPs, counting the running slices' heartbeats,
// never below what it showed before.
func (s splitState) done() float64 {
	d := float64(s.MLPsDone)
	for _, r := range s.Running {
		d += float64(r.DoneMLPs)
		if r.SamplesEach > 0 && r.DoneMLPs < r.TotalMLPs {
			d += float64(r.SamplesDone) / float64(r.SamplesEach)
		}
	}
	return min(max(d, s.least), float64(s.MLPsTotal))
}

type pendingActivity struct {
	Workflow, Type, State string
	Attempt, MaxAttempts  int32
	LastHeartbeat         time.Time
	Details               string
	LastFailure           string
}

func (s bakeState) running() bool { return s.Status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING }

// exitError is nil unless the bake failed (failed, terminated, timed out):
// status and watch report a cancelled bake, which is what was asked for,
// as a success.
func (s bakeState) exitError() error {
	switch s.Status {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING, enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, enums.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return nil
	}
	return fmt.Errorf("bake %s %s", s.ID, statusWord(s.Status))
}

// bakeWatcher collects a bake's state; it caches the workflow input, which
// never changes within a run, and the histories of closed workflows.
type bakeWatcher struct {
	c        client.Client
	temporal settings.Temporal // where c is connected, for errors
	id       string
	input    *bakeapi.BakeInput
	runID    string
	// counts: read running splits' histories too (status, once), for
	// their Computed/Resumed/Reused counts. Watching reads each history
	// once, when its workflow has closed.
	counts    bool
	histories map[string]*runHistory // by workflow ID and run ID, closed runs only
	// seen is the most finished work shown per split, carried what earlier
	// runs of the bake committed per split workflow (donework.go).
	seen, carried map[string]doneWork
}

func newBakeWatcher(c client.Client, t settings.Temporal, id string) *bakeWatcher {
	return &bakeWatcher{c: c, temporal: t, id: id, histories: map[string]*runHistory{},
		seen: map[string]doneWork{}, carried: map[string]doneWork{}}
}

// history reads a run's history, from the cache when the run has closed.
func (w *bakeWatcher) history(ctx context.Context, wid, runID string, closed bool) (*runHistory, error) {
	key := wid + "\x00" + runID
	if h, ok := w.histories[key]; ok {
		return h, nil
	}
	h, err := readHistory(ctx, w.c, wid, runID)
	if err != nil {
		return nil, err
	}
	if closed {
		w.histories[key] = &h
	}
	return &h, nil
}

func (w *bakeWatcher) collect(ctx context.Context) (bakeState, error) {
	wid := bakeapi.BakeWorkflowID(w.id)
	desc, err := w.c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return bakeState{}, noSuchBake(w.temporal, w.id, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	st := bakeState{ID: w.id, RunID: info.GetExecution().GetRunId(), Status: info.GetStatus(), Start: info.GetStartTime().AsTime()}
	if info.GetCloseTime() != nil {
		st.End = info.GetCloseTime().AsTime()
	}
	if p := info.GetSearchAttributes().GetIndexedFields()[bakeapi.BakeStageAttribute]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &st.Stage)
	}
	if w.input == nil || w.runID != st.RunID {
		if w.input, err = w.startInput(ctx, wid, st.RunID); err != nil {
			return st, err
		}
		w.runID = st.RunID
	}
	st.Input = w.input
	// A closed workflow still lists the activities it left running; they
	// are not pending any more, and printStopped shows them.
	if st.running() {
		st.Pending = pendingOf(wid, desc.GetPendingActivities())
	}
	for _, s := range w.input.Splits {
		sp, pend := w.split(ctx, s, &st)
		if sp.Stage != bakeapi.StageDone {
			w.keepDone(ctx, &sp, bakeapi.SplitWorkflowID(w.id, s.Name))
		}
		st.Splits = append(st.Splits, sp)
		st.Pending = append(st.Pending, pend...)
	}
	switch st.Status {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var out bakeapi.BakeOutput
		if err := w.c.GetWorkflow(ctx, wid, st.RunID).Get(ctx, &out); err != nil {
			return st, err
		}
		st.Result = &out
	default:
		st.Failure = w.c.GetWorkflow(ctx, wid, st.RunID).Get(ctx, nil)
		// Like the splits' counts, what was stopped is left out on a
		// transient error rather than failing the whole status.
		if h, err := w.history(ctx, wid, st.RunID, true); err == nil {
			st.Stopped = h.Open
		}
	}
	return st, nil
}

// startInput reads the run's BakeInput from its first history event, so
// status works for closed bakes and without any worker.
func (w *bakeWatcher) startInput(ctx context.Context, wid, runID string) (*bakeapi.BakeInput, error) {
	it := w.c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, fmt.Errorf("bake %s: empty history", w.id)
	}
	ev, err := it.Next()
	if err != nil {
		return nil, err
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return nil, fmt.Errorf("bake %s: history does not start with the workflow's start", w.id)
	}
	var in bakeapi.BakeInput
	if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &in); err != nil {
		return nil, fmt.Errorf("bake %s: reading its input: %w", w.id, err)
	}
	return &in, nil
}

// split describes a split workflow and, while it runs, asks it for progress.
func (w *bakeWatcher) split(ctx context.Context, s bakeapi.SplitSpec, st *bakeState) (splitState, []pendingActivity) {
	sp := splitState{SplitProgress: bakeapi.SplitProgress{Split: s.Name, Stage: bakeapi.StageSeeding, MLPsTotal: s.NMLPs}}
	if !st.running() && st.Stage != bakeapi.StageSeeding {
		sp.Stage = "-"
	}
	wid := bakeapi.SplitWorkflowID(w.id, s.Name)
	desc, err := w.c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return sp, nil // not started yet; a transient error shows the same until the next refresh
	}
	if desc.GetWorkflowExecutionInfo().GetStartTime().AsTime().Before(st.Start) {
		return sp, nil // the split of a run before this one: this run has not started it yet
	}
	status := desc.GetWorkflowExecutionInfo().GetStatus()
	if closed := status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING; closed || w.counts {
		// A transient error leaves the counts out until the next refresh.
		sp.Hist, _ = w.history(ctx, wid, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), closed)
	}
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		slices := (s.NMLPs + w.input.SliceSize - 1) / w.input.SliceSize
		sp.Stage, sp.MLPsDone, sp.SlicesDone, sp.SlicesTotal = bakeapi.StageDone, s.NMLPs, slices, slices
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		sp.Stage = bakeapi.StageBaking
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		defer cancel()
		if v, err := w.c.QueryWorkflow(qctx, wid, "", bakeapi.ProgressQuery); err == nil {
			var p bakeapi.SplitProgress
			if v.Get(&p) == nil {
				sp.SplitProgress = p
			}
		} else {
			st.QueryFailed = true
		}
	default:
		// Ended without completing: what its history shows finished.
		sp.Stage = statusWord(status)
		sp.SlicesTotal = bakeapi.SliceCount(s.NMLPs, w.input.SliceSize)
		if h := sp.Hist; h != nil {
			sp.MLPsDone, sp.SlicesDone = h.MLPsDone, h.SlicesDone
		}
	}
	if status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return sp, nil
	}
	pend := pendingOf(wid, desc.GetPendingActivities())
	for _, pa := range desc.GetPendingActivities() {
		var p bakeapi.SliceProgress
		if pa.GetHeartbeatDetails() != nil && converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p) == nil && p.TotalMLPs > 0 {
			sp.Running = append(sp.Running, p)
		}
	}
	return sp, pend
}

func pendingOf(wid string, list []*workflowpb.PendingActivityInfo) []pendingActivity {
	var out []pendingActivity
	for _, pa := range list {
		p := pendingActivity{
			Workflow: wid, Type: pa.GetActivityType().GetName(),
			State:   strings.ToLower(strings.TrimPrefix(pa.GetState().String(), "PENDING_ACTIVITY_STATE_")),
			Attempt: pa.GetAttempt(), MaxAttempts: pa.GetMaximumAttempts(),
			LastFailure: pa.GetLastFailure().GetMessage(),
		}
		if t := pa.GetLastHeartbeatTime(); t != nil {
			p.LastHeartbeat = t.AsTime()
		}
		if d := pa.GetHeartbeatDetails(); d != nil {
			var raw json.RawMessage
			if converter.GetDefaultDataConverter().FromPayloads(d, &raw) == nil {
				p.Details = describeHeartbeat(raw)
			}
		}
		out = append(out, p)
	}
	return out
}

// describeHeartbeat renders a slice's heartbeat, or any other detail as JSON.
func describeHeartbeat(raw json.RawMessage) string {
	var p bakeapi.SliceProgress
	if json.Unmarshal(raw, &p) == nil && p.TotalMLPs > 0 {
		return fmt.Sprintf("slice %d: %d/%d MLPs done, MLP %d at %d/%d samples", p.Slice, p.DoneMLPs, p.TotalMLPs, p.CurrentMLP, p.SamplesDone, p.SamplesEach)
	}
	return string(raw)
}

func statusWord(s enums.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

func printStatus(w io.Writer, cfg settings.Config, st bakeState, now time.Time) {
	wid := bakeapi.BakeWorkflowID(st.ID)
	fmt.Fprintf(w, "Bake %s: %s", st.ID, strings.ToUpper(statusWord(st.Status)))
	if st.Stage != "" {
		fmt.Fprintf(w, ", stage %s", st.Stage)
	}
	if st.End.IsZero() {
		fmt.Fprintf(w, ", running for %s\n", formatDuration(now.Sub(st.Start)))
	} else {
		fmt.Fprintf(w, ", took %s (ended %s)\n", formatDuration(st.End.Sub(st.Start)), st.End.Local().Format(time.DateTime))
	}
	fmt.Fprintf(w, "  workflow %s  run %s\n  Web UI   %s\n", wid, st.RunID, webUILink(cfg, wid))
	if in := st.Input; in != nil {
		fmt.Fprintf(w, "  shape    width %d, depth %d, %d samples, sampler %s; %d MLPs per slice, %s slices in flight per split\n",
			in.Spec.Width, in.Spec.Depth, in.Spec.NSamples, in.Spec.Sampler, in.SliceSize, inFlightText(in.MaxInFlight))
	}
	// COMPUTED, RESUMED and REUSED count the MLPs of finished slices by how
	// each was obtained: from scratch, from a checkpoint, or from an earlier
	// attempt or an earlier run of this bake ID. STOPS counts the slice
	// attempts that workers stopped gracefully and handed back.
	const row = "  %-16s %-9s %-11s %-22s %-8s %-7s %-6s %-5s %s\n"
	fmt.Fprintf(w, "\n"+row, "SPLIT", "STAGE", "MLPS", "SLICES", "COMPUTED", "RESUMED", "REUSED", "STOPS", "ETA")
	for _, s := range st.Splits {
		slices := "-"
		if s.SlicesTotal > 0 {
			slices = fmt.Sprintf("%d/%d", s.SlicesDone, s.SlicesTotal)
			if s.SlicesRunning > 0 {
				slices += fmt.Sprintf(" (%d running)", s.SlicesRunning)
				if s.MaxInFlight > s.SlicesRunning {
					slices += fmt.Sprintf(" of %d", s.MaxInFlight)
				}
			}
		}
		computed, resumed, reused, stops := "-", "-", "-", "-"
		if h := s.Hist; h != nil {
			computed, resumed, reused, stops = fmt.Sprint(h.Computed), fmt.Sprint(h.Resumed), fmt.Sprint(h.Reused), fmt.Sprint(h.Stops)
		}
		fmt.Fprintf(w, row, s.Split, s.Stage, fmt.Sprintf("%d/%d", s.MLPsDone, s.MLPsTotal), slices, computed, resumed, reused, stops, eta(s, now))
	}
	for _, s := range st.Splits {
		if h := s.Hist; h != nil && h.Discarded > 0 {
			fmt.Fprintf(w, "  split %s: %d damaged objects in S3 (results, checkpoints, identity blocks, partial manifests) were discarded and recomputed; see the GPU workers' logs\n", s.Split, h.Discarded)
		}
	}
	printStopped(w, st)
	if st.QueryFailed {
		fmt.Fprintln(w, "  (no live progress: no control worker answered the progress query; is `whestbake-worker --role control` running?)")
	}
	if len(st.Pending) > 0 {
		fmt.Fprintln(w, "\n  Pending activities:")
		for _, p := range st.Pending {
			fmt.Fprintf(w, "    %s %s: %s, attempt %d", strings.TrimPrefix(p.Workflow, wid+"/"), p.Type, p.State, p.Attempt)
			if p.MaxAttempts > 0 {
				fmt.Fprintf(w, " of %d", p.MaxAttempts)
			}
			if !p.LastHeartbeat.IsZero() {
				fmt.Fprintf(w, ", heartbeat %s ago", formatDuration(now.Sub(p.LastHeartbeat)))
			}
			if p.Details != "" {
				fmt.Fprintf(w, ": %s", printable(p.Details))
			}
			fmt.Fprintln(w)
			if p.LastFailure != "" {
				fmt.Fprintf(w, "      last failure: %s\n", printable(p.LastFailure))
			}
		}
	}
	if r := st.Result; r != nil {
		fmt.Fprintf(w, "\n  dataset  s3://%s/%s (manifest sha256 %s)\n", cfg.S3.Bucket, r.DatasetPrefix, r.ManifestSHA256)
		if r.ReleaseURI != "" {
			fmt.Fprintf(w, "  release  %s\n", r.ReleaseURI)
		}
		if r.HubURL != "" {
			fmt.Fprintf(w, "  hub      %s (commit %s)\n", printable(r.HubURL), printable(r.HubCommit))
		}
	}
	if st.Failure != nil {
		fmt.Fprintf(w, "\n  failure  %s\n", printable(failureText(st.Failure)))
	}
}

// printStopped says, for a bake that ended without completing, in which
// stage it ended and what was running then, which is what was cancelled
// (or cut short by the failure), and what never started.
func printStopped(w io.Writer, st bakeState) {
	if st.running() || st.Status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return
	}
	fmt.Fprintf(w, "\n  %s during stage %s. Running then, and stopped:\n", strings.ToUpper(statusWord(st.Status)[:1])+statusWord(st.Status)[1:], orDash(st.Stage))
	listed := false
	for _, s := range st.Splits {
		if s.Hist == nil || s.Stage == bakeapi.StageDone {
			continue
		}
		var parts []string
		ran := map[int]bool{} // slices that ran or were running, unfinished
		for _, o := range s.Hist.Open {
			text := o.String()
			if o.Slice != nil {
				ran[o.Slice.Slice] = true
				if r := s.Hist.Unfinished[o.Slice.Slice]; r != nil && r.Stops > 0 {
					text += fmt.Sprintf(" after %d stop(s) by its workers", r.Stops)
				}
			}
			parts = append(parts, text)
		}
		// Slices that ran and ended unfinished, with nothing running: the
		// one that failed the bake, and those handed back by their workers.
		for _, k := range slices.Sorted(maps.Keys(s.Hist.Unfinished)) {
			if r := s.Hist.Unfinished[k]; !ran[k] && r.Attempts > 0 {
				ran[k] = true
				parts = append(parts, r.String())
			}
		}
		if left := s.SlicesTotal - s.SlicesDone - len(ran); left > 0 {
			parts = append(parts, fmt.Sprintf("%d slice(s) not started", left))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "    split %s: %s\n", s.Split, strings.Join(parts, ", "))
			listed = true
		}
	}
	for _, o := range st.Stopped {
		fmt.Fprintf(w, "    bake: %s\n", o)
		listed = true
	}
	if !listed {
		fmt.Fprintln(w, "    nothing")
	}
	fmt.Fprintln(w, "  Finished MLPs stay in S3: starting the bake again with the same ID and config reuses them.")
}

// inFlightText is a bake's max-in-flight as the config writes it.
func inFlightText(n int) string {
	if n == 0 {
		return settings.AutoInFlight + " (one per GPU worker)"
	}
	return fmt.Sprint(n)
}

// eta is the split's remaining time: its elapsed time so far scaled by the
// work left, counting the running slices' heartbeats. It is measured up to
// now rather than to the last finished slice, so it never lies in the past
// ("any moment" while half the work is left) and grows while nothing
// finishes. It is unknown ("-") while the counts shown are carried over
// rather than the run's own, whose pace they would not tell.
func eta(s splitState, now time.Time) string {
	done := s.done()
	switch {
	case s.Stage == bakeapi.StageDone:
		return "done"
	case s.Stage != bakeapi.StageBaking || s.StartedAt.IsZero() || done <= 0 || s.carried:
		return "-"
	case done >= float64(s.MLPsTotal):
		return "merging soon"
	}
	elapsed := now.Sub(s.StartedAt)
	return formatDuration(time.Duration(float64(elapsed) * (float64(s.MLPsTotal) - done) / done))
}

// failureText is the root cause of a failed bake (the innermost application
// error, with its type) after the path that led to it.
func failureText(err error) string {
	var root *temporal.ApplicationError
	for e := err; e != nil; e = errors.Unwrap(e) {
		if a, ok := e.(*temporal.ApplicationError); ok {
			root = a
		}
	}
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled):
		return "canceled"
	case errors.As(err, &terminated):
		return "terminated: " + err.Error()
	case root != nil && root.Type() != "" && root.Type() != "wrapError":
		retry := "retryable"
		if root.NonRetryable() {
			retry = "not retryable"
		}
		return fmt.Sprintf("%s (%s, %s)", root.Message(), root.Type(), retry)
	case errors.As(err, &timeout):
		return fmt.Sprintf("timed out (%s): %v", timeout.TimeoutType(), err)
	}
	return err.Error()
}
