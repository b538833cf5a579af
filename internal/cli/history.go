package cli

import (
	"context"
	"fmt"

	enums "go.temporal.io/api/enums/v1"
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
	// Open lists, in the order they were scheduled, the activities that
	// never closed: at the end of a cancelled run, what was stopped.
	Open []openActivity
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
	dc := converter.GetDefaultDataConverter()
	scheduled := map[int64]openActivity{}
	var order []int64
	var prev string
	it := c.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("reading the history of %s: %w", wid, err)
		}
		var closed int64
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			prev = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			o := openActivity{Type: a.GetActivityType().GetName()}
			if o.Type == bakeapi.BakeSliceActivity {
				var in bakeapi.BakeSliceInput
				if dc.FromPayloads(a.GetInput(), &in) == nil {
					o.Slice = &in
				}
			}
			scheduled[ev.GetEventId()] = o
			order = append(order, ev.GetEventId())
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			closed = a.GetScheduledEventId()
			if o := scheduled[closed]; o.Slice != nil {
				var out bakeapi.BakeSliceOutput
				if dc.FromPayloads(a.GetResult(), &out) == nil {
					h.Computed += out.Computed
					h.Resumed += out.Resumed
					h.Reused += out.Reused
					h.Discarded += out.Discarded
				}
				h.SlicesDone++
				h.MLPsDone += o.Slice.End - o.Slice.Start
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			closed = ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
		case enums.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			closed = ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
		case enums.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			closed = ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
		}
		if closed != 0 {
			delete(scheduled, closed)
		}
	}
	// Earlier runs come later here but happened first: keep time order.
	var open []openActivity
	for _, id := range order {
		if o, ok := scheduled[id]; ok {
			open = append(open, o)
		}
	}
	h.Open = append(open, h.Open...)
	return prev, nil
}
