package bakeclient

import (
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
)

// events builds a split's history as the Temporal server records it.
type events struct {
	t    *testing.T
	list []*historypb.HistoryEvent
}

func (e *events) add(typ enums.EventType, set func(*historypb.HistoryEvent)) int64 {
	ev := &historypb.HistoryEvent{EventId: int64(len(e.list) + 1), EventType: typ}
	set(ev)
	e.list = append(e.list, ev)
	return ev.EventId
}

func (e *events) schedule(slice, start, end int) int64 {
	in, err := converter.GetDefaultDataConverter().ToPayloads(
		bakeapi.BakeSliceInput{Slice: slice, Start: start, End: end})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.add(enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
			ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityType: &commonpb.ActivityType{Name: bakeapi.BakeSliceActivity},
				Input:        in,
			}}
	})
}

// started is the event the server writes when the activity closes: its
// last attempt, and the failure of the attempt before it.
func (e *events) started(scheduled int64, attempt int32, last *failurepb.Failure) {
	e.add(enums.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{
			ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{
				ScheduledEventId: scheduled, Attempt: attempt, LastFailure: last,
			}}
	})
}

func (e *events) completed(scheduled int64) {
	e.add(enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{
			ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{
				ScheduledEventId: scheduled,
			}}
	})
}

func (e *events) failed(scheduled int64, f *failurepb.Failure) {
	e.add(enums.EVENT_TYPE_ACTIVITY_TASK_FAILED, func(ev *historypb.HistoryEvent) {
		ev.Attributes = &historypb.HistoryEvent_ActivityTaskFailedEventAttributes{
			ActivityTaskFailedEventAttributes: &historypb.ActivityTaskFailedEventAttributes{
				ScheduledEventId: scheduled, Failure: f,
			}}
	})
}

func heartbeatTimeout() *failurepb.Failure {
	return &failurepb.Failure{
		Message: "activity Heartbeat timeout",
		FailureInfo: &failurepb.Failure_TimeoutFailureInfo{
			TimeoutFailureInfo: &failurepb.TimeoutFailureInfo{
				TimeoutType: enums.TIMEOUT_TYPE_HEARTBEAT,
			}},
	}
}

func appFailure(typ string) *failurepb.Failure {
	return &failurepb.Failure{
		Message: typ,
		FailureInfo: &failurepb.Failure_ApplicationFailureInfo{
			ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: typ}},
	}
}

// A finished slice that needed more than one attempt stays on record with
// how its last failed attempt ended: a heartbeat timeout, which Temporal
// retried within one activity (only the started event says so), or a
// worker's stop, after which the split started a new activity.
func TestHistoryKeepsRetriedSlices(t *testing.T) {
	e := &events{t: t}
	lost := e.schedule(0, 0, 2)
	e.started(lost, 2, heartbeatTimeout())
	e.completed(lost)
	stopped := e.schedule(1, 2, 4)
	e.started(stopped, 1, nil)
	e.failed(stopped, appFailure(bakeapi.ErrWorkerStopping))
	again := e.schedule(1, 2, 4)
	e.started(again, 1, nil)
	e.completed(again)
	clean := e.schedule(2, 4, 6)
	e.started(clean, 1, nil)
	e.completed(clean)
	open := e.schedule(3, 6, 8)
	e.started(open, 3, appFailure(bakeapi.ErrEngineStalled))

	var h History
	r := h.newRun()
	for _, ev := range e.list {
		r.fold(ev)
	}
	r.end()
	h.sort()

	if h.SlicesDone != 3 || h.Stops != 1 {
		t.Errorf("%d slices done, %d stops; want 3 and 1", h.SlicesDone, h.Stops)
	}
	want := map[int]SliceRuns{
		0: {Slice: SliceRef{0, 0, 2}, Attempts: 2, LastFailure: HeartbeatTimeout},
		1: {Slice: SliceRef{1, 2, 4}, Attempts: 2, Stops: 1, LastFailure: bakeapi.ErrWorkerStopping},
	}
	if len(h.Retried) != len(want) {
		t.Errorf("retried slices %v, want 0 and 1", h.Retried)
	}
	for k, w := range want {
		if got := h.Retried[k]; got == nil || *got != w {
			t.Errorf("retried slice %d: %+v, want %+v", k, got, w)
		}
	}
	if u := h.Unfinished[3]; len(h.Unfinished) != 1 || u == nil ||
		u.Attempts != 3 || u.LastFailure != bakeapi.ErrEngineStalled {
		t.Errorf("unfinished %v, want slice 3 after 3 attempts, last EngineStalled", h.Unfinished)
	}
}
