package bakeclient

import (
	"context"
	"fmt"

	enums "go.temporal.io/api/enums/v1"
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
	// Stops counts the slice attempts that workers stopped gracefully
	// (WorkerStopping) and handed back.
	Stops int `json:"stops"`
	// Unfinished are the slices that ran (an attempt started) or were
	// scheduled, and never committed, by slice index.
	Unfinished map[int]*SliceRuns `json:"unfinished_slices"`
	// Open lists, in the order they were scheduled, the activities that
	// never closed: at the end of a cancelled run, what was stopped.
	Open []OpenActivity `json:"open_activities"`
	// committed are the slices that committed in the runs read so far, with
	// their MLPs; runs are read newest first.
	committed map[int]bakeapi.Range
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

// SliceRuns is what the history shows of one slice that never committed.
type SliceRuns struct {
	Slice    SliceRef `json:"slice"`
	Attempts int32    `json:"attempts"` // attempts that started, over every activity of the slice
	Stops    int      `json:"stops"`    // of them, stopped gracefully
	// LastFailure is the type of the last failed attempt's error, or
	// "timeout".
	LastFailure string `json:"last_failure,omitempty"`
}

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
	return h, nil
}

// add folds one run's events into h and returns the run it continued, if any.
func (h *History) add(ctx context.Context, c client.Client, wid, runID string) (string, error) {
	if h.Unfinished == nil {
		h.Unfinished = map[int]*SliceRuns{}
		h.committed = map[int]bakeapi.Range{}
	}
	r := runEvents{
		history:       h,
		dataConverter: converter.GetDefaultDataConverter(),
		scheduled:     map[int64]OpenActivity{},
	}
	it := c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("reading the history of %s: %w", wid, err)
		}
		r.fold(ev)
	}
	// Earlier runs come later here but happened first: keep time order.
	open := []OpenActivity{}
	for _, id := range r.order {
		if o, ok := r.scheduled[id]; ok {
			open = append(open, o)
		}
	}
	h.Open = append(open, h.Open...)
	return r.prev, nil
}

// runEvents is one run's events being read into h.
type runEvents struct {
	history       *History
	dataConverter converter.DataConverter
	scheduled     map[int64]OpenActivity // not yet closed, by scheduling event ID
	order         []int64                // the scheduling event IDs, in order
	prev          string                 // the run this one continued
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
		// Written once per activity, when it closes, with its last attempt.
		a := ev.GetActivityTaskStartedEventAttributes()
		if s := h.sliceRunsOf(r.scheduled[a.GetScheduledEventId()]); s != nil {
			s.Attempts += a.GetAttempt()
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
		h.failed(r.scheduled[closed], a.GetFailure().GetApplicationFailureInfo().GetType())
	case enums.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		closed = ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
		if s := h.sliceRunsOf(r.scheduled[closed]); s != nil {
			s.LastFailure = "timeout"
		}
	case enums.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
		closed = ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
	}
	if closed != 0 {
		delete(r.scheduled, closed)
	}
}

// sliceRunsOf is the record of o's slice while the slice has not committed,
// made on first sight; nil for other activities and for committed slices.
func (h *History) sliceRunsOf(o OpenActivity) *SliceRuns {
	if o.Slice == nil {
		return nil
	}
	if _, done := h.committed[o.Slice.Index]; done {
		return nil
	}
	r := h.Unfinished[o.Slice.Index]
	if r == nil {
		r = &SliceRuns{Slice: *o.Slice}
		h.Unfinished[o.Slice.Index] = r
	}
	return r
}

// commit moves slice s from the unfinished slices to the finished ones.
func (h *History) commit(s SliceRef) {
	h.SlicesDone++
	h.MLPsDone += s.End - s.Start
	h.committed[s.Index] = bakeapi.Range{Start: s.Start, End: s.End}
	delete(h.Unfinished, s.Index)
}

// failed records that an attempt of o failed with the failure type kind.
func (h *History) failed(o OpenActivity, kind string) {
	if o.Slice != nil && kind == bakeapi.ErrWorkerStopping {
		h.Stops++
	}
	if r := h.sliceRunsOf(o); r != nil {
		r.LastFailure = kind
		if kind == bakeapi.ErrWorkerStopping {
			r.Stops++
		}
	}
}
