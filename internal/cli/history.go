package cli

import (
	"context"
	"fmt"

	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
)

// runHistory is what a workflow's history says its activities did, summed
// over the runs of a continue-as-new chain.
type runHistory struct {
	// Computed, Resumed and Reused sum the BakeSlice outputs: how each
	// finished slice's MLPs were obtained.
	Computed, Resumed, Reused int
	// Discarded sums the damaged objects finished slices dropped and recomputed.
	Discarded            int
	SlicesDone, MLPsDone int // finished slices and their MLPs
	// Stops counts the slice attempts that workers stopped gracefully
	// (WorkerStopping) and handed back.
	Stops int
	// Unfinished are the slices that ran (an attempt started) or were
	// scheduled, and never committed, by slice index.
	Unfinished map[int]*sliceRuns
	// Open lists, in the order they were scheduled, the activities that
	// never closed: at the end of a cancelled run, what was stopped.
	Open []openActivity
	// committed are the slices that committed in the runs read so far, with
	// their MLPs; runs are read newest first.
	committed map[int]bakeapi.Range
}

// sliceRuns is what the history shows of one slice that never committed.
type sliceRuns struct {
	In       bakeapi.BakeSliceInput
	Attempts int32 // attempts that started, over every activity of the slice
	Stops    int   // of them, stopped gracefully
	LastType string
}

func (r sliceRuns) String() string {
	s := fmt.Sprintf("slice %d (MLPs %d-%d) ran %d attempt(s)", r.In.Slice, r.In.Start, r.In.End-1, r.Attempts)
	if r.Stops > 0 {
		s += fmt.Sprintf(", %d stopped by their worker", r.Stops)
	}
	if r.LastType != "" {
		s += ", last failure " + r.LastType
	}
	return s
}

// openActivity is an activity scheduled and never closed.
type openActivity struct {
	Type  string
	Slice *bakeapi.BakeSliceInput // BakeSlice's input, nil for other types
}

func (o openActivity) String() string {
	if s := o.Slice; s != nil {
		return fmt.Sprintf("slice %d (MLPs %d-%d)", s.Slice, s.Start, s.End-1)
	}
	return o.Type
}

// readHistory reads the history of run runID of workflow wid, then of the
// runs it continued, back to the first.
func readHistory(ctx context.Context, c client.Client, wid, runID string) (runHistory, error) {
	var h runHistory
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
func (h *runHistory) add(ctx context.Context, c client.Client, wid, runID string) (string, error) {
	if h.Unfinished == nil {
		h.Unfinished, h.committed = map[int]*sliceRuns{}, map[int]bakeapi.Range{}
	}
	r := runEvents{h: h, dc: converter.GetDefaultDataConverter(), scheduled: map[int64]openActivity{}}
	it := c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("reading the history of %s: %w", wid, err)
		}
		r.fold(ev)
	}
	// Earlier runs come later here but happened first: keep time order.
	var open []openActivity
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
	h         *runHistory
	dc        converter.DataConverter
	scheduled map[int64]openActivity // not yet closed, by scheduling event ID
	order     []int64                // the scheduling event IDs, in order
	prev      string                 // the run this one continued
}

// fold applies one event of the run to r and its history.
func (r *runEvents) fold(ev *historypb.HistoryEvent) {
	h := r.h
	var closed int64
	switch ev.GetEventType() {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		r.prev = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := ev.GetActivityTaskScheduledEventAttributes()
		o := openActivity{Type: a.GetActivityType().GetName()}
		if o.Type == bakeapi.BakeSliceActivity {
			var in bakeapi.BakeSliceInput
			if r.dc.FromPayloads(a.GetInput(), &in) == nil {
				o.Slice = &in
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
			if r.dc.FromPayloads(a.GetResult(), &out) == nil {
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
			s.LastType = "timeout"
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
func (h *runHistory) sliceRunsOf(o openActivity) *sliceRuns {
	if o.Slice == nil {
		return nil
	}
	if _, done := h.committed[o.Slice.Slice]; done {
		return nil
	}
	r := h.Unfinished[o.Slice.Slice]
	if r == nil {
		r = &sliceRuns{In: *o.Slice}
		h.Unfinished[o.Slice.Slice] = r
	}
	return r
}

// commit moves slice s from the unfinished slices to the finished ones.
func (h *runHistory) commit(s bakeapi.BakeSliceInput) {
	h.SlicesDone++
	h.MLPsDone += s.End - s.Start
	h.committed[s.Slice] = bakeapi.Range{Start: s.Start, End: s.End}
	delete(h.Unfinished, s.Slice)
}

// failed records that an attempt of o failed with the failure type kind.
func (h *runHistory) failed(o openActivity, kind string) {
	if o.Slice != nil && kind == bakeapi.ErrWorkerStopping {
		h.Stops++
	}
	if r := h.sliceRunsOf(o); r != nil {
		r.LastType = kind
		if kind == bakeapi.ErrWorkerStopping {
			r.Stops++
		}
	}
}
