package bakeclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/settings"
)

// queryTimeout bounds a progress query: it needs a running control worker,
// and status must still answer from Describe alone when there is none.
const queryTimeout = 2 * time.Second

// watcher collects a bake's state; it caches the workflow input, which
// never changes within a run, and the histories of closed workflows.
type watcher struct {
	temporal client.Client
	cfg      settings.Config // where temporal is connected, for errors; the bucket and the Web UI
	bakeID   string
	input    *bakeapi.BakeInput
	runID    string
	// counts: read running splits' histories too, once for status, for
	// their Computed/Resumed/Reused counts. Watching reads each history
	// once, when its workflow has closed.
	counts    bool
	histories map[string]*History // by workflow ID and run ID, closed runs only
	// seen is the most finished work shown per split, carried what earlier
	// runs of the bake committed per split workflow; see donework.go.
	seen, carried map[string]doneWork
}

func newWatcher(c client.Client, cfg settings.Config, id string) *watcher {
	return &watcher{
		temporal:  c,
		cfg:       cfg,
		bakeID:    id,
		histories: map[string]*History{},
		seen:      map[string]doneWork{},
		carried:   map[string]doneWork{},
	}
}

// history reads a run's history, from the cache when the run has closed.
func (w *watcher) history(ctx context.Context, wid, runID string, closed bool) (*History, error) {
	key := wid + "\x00" + runID
	if h, ok := w.histories[key]; ok {
		return h, nil
	}
	h, err := readHistory(ctx, w.temporal, wid, runID)
	if err != nil {
		return nil, err
	}
	if closed {
		w.histories[key] = &h
	}
	return &h, nil
}

func (w *watcher) collect(ctx context.Context) (Status, error) {
	wid := bakeapi.BakeWorkflowID(w.bakeID)
	desc, err := w.temporal.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return Status{}, noSuchBake(w.cfg.Temporal, w.bakeID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	status := info.GetStatus()
	st := Status{
		ID:         w.bakeID,
		WorkflowID: wid,
		RunID:      info.GetExecution().GetRunId(),
		State:      stateWord(status),
		Start:      info.GetStartTime().AsTime(),
		WebUI:      w.cfg.WorkflowURL(wid),
		Splits:     []Split{},
		Pending:    []Pending{},
	}
	if info.GetCloseTime() != nil {
		st.End = info.GetCloseTime().AsTime()
	}
	if p := info.GetSearchAttributes().GetIndexedFields()[bakeapi.BakeStageAttribute]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &st.Stage)
	}
	if w.input == nil || w.runID != st.RunID {
		if w.input, err = startInput(ctx, w.temporal, w.bakeID, st.RunID); err != nil {
			return st, err
		}
		w.runID = st.RunID
	}
	st.Shape = shapeOf(*w.input)
	// A closed workflow still lists the activities it left running; they
	// are not pending any more, and Stopped has them.
	if st.Running() {
		st.Pending = append(st.Pending, pendingOf(wid, desc.GetPendingActivities())...)
	}
	for _, s := range w.input.Splits {
		sp, pend := w.split(ctx, s, &st)
		if sp.Stage != bakeapi.StageDone {
			w.keepDone(ctx, &sp, bakeapi.SplitWorkflowID(w.bakeID, s.Name))
		}
		st.Splits = append(st.Splits, sp)
		st.Pending = append(st.Pending, pend...)
	}
	if err := w.outcome(ctx, status, &st); err != nil {
		return st, err
	}
	st.At = time.Now().UTC()
	for i := range st.Splits {
		st.Splits[i].snapshot(st.At)
	}
	return st, nil
}

// outcome fills in how a closed bake ended: its result, or its failure and
// what it stopped.
func (w *watcher) outcome(ctx context.Context, status enums.WorkflowExecutionStatus, st *Status,
) error {
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var out bakeapi.BakeOutput
		if err := w.temporal.GetWorkflow(ctx, st.WorkflowID, st.RunID).Get(ctx, &out); err != nil {
			return err
		}
		st.Result = &Result{
			Dataset:        fmt.Sprintf("s3://%s/%s", w.cfg.S3.Bucket, out.DatasetPrefix),
			ManifestSHA256: out.ManifestSHA256,
			Release:        out.ReleaseURI,
			Hub:            out.HubURL,
			HubCommit:      out.HubCommit,
		}
	default:
		st.Failure = failureOf(w.temporal.GetWorkflow(ctx, st.WorkflowID, st.RunID).Get(ctx, nil))
		// Like the splits' counts, what was stopped is left out on a
		// transient error rather than failing the whole status.
		if h, err := w.history(ctx, st.WorkflowID, st.RunID, true); err == nil {
			st.Stopped = h.Open
		}
	}
	return nil
}

func shapeOf(in bakeapi.BakeInput) Shape {
	return Shape{
		Width:       in.Spec.Width,
		Depth:       in.Spec.Depth,
		NSamples:    in.Spec.NSamples,
		Sampler:     string(in.Spec.Sampler),
		SliceSize:   in.SliceSize,
		MaxInFlight: in.MaxInFlight,
	}
}

// startInput reads the run's BakeInput from its first history event, so
// status works for closed bakes and without any worker.
func startInput(ctx context.Context, c client.Client, id, runID string,
) (*bakeapi.BakeInput, error) {
	wid := bakeapi.BakeWorkflowID(id)
	it := c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, fmt.Errorf("bake %s: empty history", id)
	}
	ev, err := it.Next()
	if err != nil {
		return nil, err
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return nil, fmt.Errorf("bake %s: history does not start with the workflow's start", id)
	}
	var in bakeapi.BakeInput
	if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &in); err != nil {
		return nil, fmt.Errorf("bake %s: reading its input: %w", id, err)
	}
	return &in, nil
}

// split describes a split workflow and, while it runs, asks it for progress.
func (w *watcher) split(ctx context.Context, s bakeapi.SplitSpec, st *Status) (Split, []Pending) {
	sp := Split{Name: s.Name, Stage: bakeapi.StageSeeding, MLPsTotal: s.NMLPs}
	if !st.Running() && st.Stage != bakeapi.StageSeeding {
		sp.Stage = "-"
	}
	wid := bakeapi.SplitWorkflowID(w.bakeID, s.Name)
	desc, err := w.temporal.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return sp, nil // not started yet; a transient error shows the same until the next refresh
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStartTime().AsTime().Before(st.Start) {
		return sp, nil // the split of a run before this one: this run has not started it yet
	}
	status := info.GetStatus()
	if closed := status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING; closed || w.counts {
		// A transient error leaves the counts out until the next refresh.
		sp.History, _ = w.history(ctx, wid, info.GetExecution().GetRunId(), closed)
	}
	switch status {
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		slices := bakeapi.SliceCount(s.NMLPs, w.input.SliceSize)
		sp.Stage = bakeapi.StageDone
		sp.MLPsDone = s.NMLPs
		sp.SlicesDone = slices
		sp.SlicesTotal = slices
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		sp.Stage = bakeapi.StageBaking
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		defer cancel()
		if v, err := w.temporal.QueryWorkflow(qctx, wid, "", bakeapi.ProgressQuery); err == nil {
			var p bakeapi.SplitProgress
			if v.Get(&p) == nil {
				sp.progress(p)
			}
		} else {
			st.ProgressQueryFailed = true
		}
	default:
		// Ended without completing: what its history shows finished.
		sp.Stage = stateWord(status)
		sp.SlicesTotal = bakeapi.SliceCount(s.NMLPs, w.input.SliceSize)
		if h := sp.History; h != nil {
			sp.MLPsDone = h.MLPsDone
			sp.SlicesDone = h.SlicesDone
		}
	}
	if status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return sp, nil
	}
	for _, pa := range desc.GetPendingActivities() {
		var p bakeapi.SliceProgress
		details := pa.GetHeartbeatDetails()
		dc := converter.GetDefaultDataConverter()
		if details != nil && dc.FromPayloads(details, &p) == nil && p.TotalMLPs > 0 {
			sp.Running = append(sp.Running, RunningSlice{
				Slice:       p.Slice,
				MLPsDone:    p.DoneMLPs,
				MLPsTotal:   p.TotalMLPs,
				CurrentMLP:  p.CurrentMLP,
				SamplesDone: p.SamplesDone,
				SamplesEach: p.SamplesEach,
			})
		}
	}
	return sp, pendingOf(wid, desc.GetPendingActivities())
}

// progress takes the split workflow's answer to the progress query.
func (s *Split) progress(p bakeapi.SplitProgress) {
	s.Name = p.Split
	s.Stage = p.Stage
	s.MLPsDone = p.MLPsDone
	s.MLPsTotal = p.MLPsTotal
	s.SlicesDone = p.SlicesDone
	s.SlicesTotal = p.SlicesTotal
	s.SlicesRunning = p.SlicesRunning
	s.MaxInFlight = p.MaxInFlight
	s.StartedAt = p.StartedAt
}

// pendingPrefix starts the name of every pending activity state.
const pendingPrefix = "PENDING_ACTIVITY_STATE_"

func pendingOf(wid string, list []*workflowpb.PendingActivityInfo) []Pending {
	var out []Pending
	for _, pa := range list {
		p := Pending{
			WorkflowID:  wid,
			Activity:    pa.GetActivityType().GetName(),
			State:       strings.ToLower(strings.TrimPrefix(pa.GetState().String(), pendingPrefix)),
			Attempt:     pa.GetAttempt(),
			MaxAttempts: pa.GetMaximumAttempts(),
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
		return fmt.Sprintf("slice %d: %d/%d MLPs done, MLP %d at %d/%d samples",
			p.Slice, p.DoneMLPs, p.TotalMLPs, p.CurrentMLP, p.SamplesDone, p.SamplesEach)
	}
	return string(raw)
}
