package bakeclient

import (
	"context"
	"fmt"

	enums "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
)

// History is what a workflow's history says its activities did, summed
// over the runs of a continue-as-new chain.
type History struct {
	// Computed, Resumed and Reused sum the BakeSlice outputs: how each
	// finished slice's MLPs were obtained.
	Computed int `json:"computed"`
	Resumed  int `json:"resumed"`
	Reused   int `json:"reused"`
	// Discarded sums the damaged objects finished slices dropped and recomputed.
	Discarded  int `json:"discarded"`
	SlicesDone int `json:"slices_done"` // finished slices
	MLPsDone   int `json:"mlps_done"`   // and their MLPs
	// Stops counts the slice attempts that workers stopped gracefully,
	// with WorkerStopping, and handed back.
	Stops int `json:"stops"`
	// Unfinished are the slices that ran, an attempt started, or were
	// scheduled, and never committed, by slice index.
	Unfinished map[int]*SliceRuns `json:"unfinished_slices"`
	// Retried are the committed slices that took more than one attempt, by
	// slice index: a host lost mid-slice shows here, with its heartbeat
	// timeout, after the slice moved on and finished elsewhere.
	Retried map[int]*SliceRuns `json:"retried_slices"`
	// Open lists, in the order they were scheduled, the activities that
	// never closed: at the end of a cancelled run, what was stopped.
	Open []OpenActivity `json:"open_activities"`
	// committed are the slices that committed in the runs read so far, with
	// their MLPs; runs are read newest first.
	committed map[int]bakeapi.Range
	// slices are the records of every slice seen, committed or not.
	slices map[int]*SliceRuns
}

// SliceRef is slice Index of a split: its MLPs [Start, End).
type SliceRef struct {
	Index int `json:"index"`
	Start int `json:"start"`
	End   int `json:"end"`
}

func (s SliceRef) String() string {
	return fmt.Sprintf("slice %d (MLPs %d-%d)", s.Index, s.Start, s.End-1)
}

// SliceRuns is what the history shows of one slice's attempts.
type SliceRuns struct {
	Slice    SliceRef `json:"slice"`
	Attempts int32    `json:"attempts"` // attempts that started, over every activity of the slice
	Stops    int      `json:"stops"`    // of them, stopped gracefully
	// LastFailure is how the last failed attempt ended: its error's type,
	// such as WorkerStopping or EngineStalled, or which of its timeouts
	// ended it: HeartbeatTimeout when its worker was lost, or
	// StartToCloseTimeout.
	LastFailure string `json:"last_failure,omitempty"`
}

// Failure kinds of an attempt that timed out, as SliceRuns.LastFailure
// names them: a heartbeat timeout is a worker lost without a stop.
const (
	HeartbeatTimeout    = "HeartbeatTimeout"
	StartToCloseTimeout = "StartToCloseTimeout"
)

func (r SliceRuns) String() string {
	s := fmt.Sprintf("%s ran %d attempt(s)", r.Slice, r.Attempts)
	if r.Stops > 0 {
		s += fmt.Sprintf(", %d stopped by their worker", r.Stops)
	}
	if r.LastFailure != "" {
		s += ", last failure " + r.LastFailure
	}
	return s
}

// OpenActivity is an activity scheduled and never closed.
type OpenActivity struct {
	Activity string    `json:"activity"`
	Slice    *SliceRef `json:"slice,omitempty"` // BakeSlice's slice, nil for other activities
}

func (o OpenActivity) String() string {
	if s := o.Slice; s != nil {
		return s.String()
	}
	return o.Activity
}

// readHistory reads the history of run runID of workflow wid, then of the
// runs it continued, back to the first.
func readHistory(ctx context.Context, c client.Client, wid, runID string) (History, error) {
	var h History
	for runID != "" {
		prev, err := h.add(ctx, c, wid, runID)
		if err != nil {
			return h, err
		}
		runID = prev
	}
	h.sort()
	return h, nil
}

// sort files every slice seen under Unfinished or, committed after more
// than one attempt, Retried.
func (h *History) sort() {
	h.Unfinished = map[int]*SliceRuns{}
	h.Retried = map[int]*SliceRuns{}
	for k, r := range h.slices {
		_, done := h.committed[k]
		switch {
		case !done:
			h.Unfinished[k] = r
		case r.Attempts > 1:
			h.Retried[k] = r
		}
	}
}

// add folds one run's events into h and returns the run it continued, if any.
func (h *History) add(ctx context.Context, c client.Client, wid, runID string) (string, error) {
	r := h.newRun()
	it := c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("reading the history of %s: %w", wid, err)
		}
		r.fold(ev)
	}
	r.end()
	return r.prev, nil
}

// newRun starts reading a run's events into h.
func (h *History) newRun() *runEvents {
	if h.slices == nil {
		h.slices = map[int]*SliceRuns{}
		h.committed = map[int]bakeapi.Range{}
	}
	return &runEvents{
		history:       h,
		dataConverter: converter.GetDefaultDataConverter(),
		scheduled:     map[int64]OpenActivity{},
		lastFailure:   map[int]string{},
	}
}

// end adds what the run left open, and its slices' last failures, to h.
func (r *runEvents) end() {
	h := r.history
	// Earlier runs come later here but happened first: keep time order.
	open := []OpenActivity{}
	for _, id := range r.order {
		if o, ok := r.scheduled[id]; ok {
			open = append(open, o)
		}
	}
	h.Open = append(open, h.Open...)
	// Runs are read newest first: an earlier run's failure is not the last.
	for k, f := range r.lastFailure {
		if s := h.slices[k]; s.LastFailure == "" {
			s.LastFailure = f
		}
	}
}

// runEvents is one run's events being read into h.
type runEvents struct {
	history       *History
	dataConverter converter.DataConverter
	scheduled     map[int64]OpenActivity // not yet closed, by scheduling event ID
	order         []int64                // the scheduling event IDs, in order
	prev          string                 // the run this one continued
	lastFailure   map[int]string         // this run's last failure per slice
}

// fold applies one event of the run to r and its history.
func (r *runEvents) fold(ev *historypb.HistoryEvent) {
	h := r.history
	var closed int64
	switch ev.GetEventType() {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		r.prev = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := ev.GetActivityTaskScheduledEventAttributes()
		o := OpenActivity{Activity: a.GetActivityType().GetName()}
		if o.Activity == bakeapi.BakeSliceActivity {
			var in bakeapi.BakeSliceInput
			if r.dataConverter.FromPayloads(a.GetInput(), &in) == nil {
				o.Slice = &SliceRef{Index: in.Slice, Start: in.Start, End: in.End}
			}
		}
		r.scheduled[ev.GetEventId()] = o
		r.order = append(r.order, ev.GetEventId())
		h.sliceRunsOf(o)
	case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
		// Written once per activity, when it closes, with its last attempt
		// and the failure of the attempt before it: the only trace of an
		// attempt Temporal retried, such as one whose worker was lost.
		a := ev.GetActivityTaskStartedEventAttributes()
		o := r.scheduled[a.GetScheduledEventId()]
		if s := h.sliceRunsOf(o); s != nil {
			s.Attempts += a.GetAttempt()
			if f := a.GetLastFailure(); f != nil && a.GetAttempt() > 1 {
				r.lastFailure[o.Slice.Index] = failureKind(f)
			}
		}
	case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		a := ev.GetActivityTaskCompletedEventAttributes()
		closed = a.GetScheduledEventId()
		if o := r.scheduled[closed]; o.Slice != nil {
			var out bakeapi.BakeSliceOutput
			if r.dataConverter.FromPayloads(a.GetResult(), &out) == nil {
				h.Computed += out.Computed
				h.Resumed += out.Resumed
				h.Reused += out.Reused
				h.Discarded += out.Discarded
			}
			h.commit(*o.Slice)
		}
	case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
		a := ev.GetActivityTaskFailedEventAttributes()
		closed = a.GetScheduledEventId()
		r.failed(r.scheduled[closed], failureKind(a.GetFailure()))
	case enums.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		a := ev.GetActivityTaskTimedOutEventAttributes()
		closed = a.GetScheduledEventId()
		r.failed(r.scheduled[closed], failureKind(a.GetFailure()))
	case enums.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
		closed = ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
	}
	if closed != 0 {
		delete(r.scheduled, closed)
	}
}

// sliceRunsOf is the record of o's slice, made on first sight; nil for
// other activities.
func (h *History) sliceRunsOf(o OpenActivity) *SliceRuns {
	if o.Slice == nil {
		return nil
	}
	r := h.slices[o.Slice.Index]
	if r == nil {
		r = &SliceRuns{Slice: *o.Slice}
		h.slices[o.Slice.Index] = r
	}
	return r
}

// commit counts slice s as finished.
func (h *History) commit(s SliceRef) {
	if _, again := h.committed[s.Index]; again {
		return
	}
	h.SlicesDone++
	h.MLPsDone += s.End - s.Start
	h.committed[s.Index] = bakeapi.Range{Start: s.Start, End: s.End}
}

// failed records that an attempt of o failed as kind says.
func (r *runEvents) failed(o OpenActivity, kind string) {
	s := r.history.sliceRunsOf(o)
	if s == nil {
		return
	}
	r.lastFailure[o.Slice.Index] = kind
	if kind == bakeapi.ErrWorkerStopping {
		r.history.Stops++
		s.Stops++
	}
}

// failureKind is how an attempt ended as SliceRuns.LastFailure names it:
// the application error's type, or the timeout that ended it.
func failureKind(f *failurepb.Failure) string {
	if t := f.GetTimeoutFailureInfo(); t != nil {
		switch t.GetTimeoutType() {
		case enums.TIMEOUT_TYPE_HEARTBEAT:
			return HeartbeatTimeout
		case enums.TIMEOUT_TYPE_START_TO_CLOSE:
			return StartToCloseTimeout
		}
		return "Timeout"
	}
	if t := f.GetApplicationFailureInfo().GetType(); t != "" {
		return t
	}
	if f.GetCanceledFailureInfo() != nil {
		return "Canceled"
	}
	return "Other"
}
