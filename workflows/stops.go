package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// sliceStops is a split run's account of the slices that workers stopped
// gracefully: which wait to start again, and what each stop cost of the
// slice's attempts. A stopped slice comes back to the split, which starts
// it again at once instead of letting Temporal retry it: a retry spends
// one of policy.slice-max-attempts, which guard against poison slices, and
// a long slice on a preemptible fleet could be stopped more often than
// that while making progress each time. Only stops that saved nothing
// spend an attempt.
type sliceStops struct {
	max     int32 // policy.slice-max-attempts
	byIndex map[int]bakeapi.StoppedSlice
	queue   []int // handed back, to start again in this order
}

// resume takes over the stopped slices of the previous run's cursor.
func (s *sliceStops) resume(stopped []bakeapi.StoppedSlice) {
	for _, st := range stopped {
		s.byIndex[st.Slice] = st
		s.queue = append(s.queue, st.Slice)
	}
}

// options gives slice k the attempts it has left, and makes a stop end the
// activity rather than be retried by Temporal.
func (s *sliceStops) options(ctx workflow.Context, k int) workflow.Context {
	o := workflow.GetActivityOptions(ctx)
	rp := *o.RetryPolicy
	rp.MaximumAttempts = s.max - s.byIndex[k].Spent // ≥ 1: stopped refuses a slice with none left
	rp.NonRetryableErrorTypes = append(
		append([]string(nil), rp.NonRetryableErrorTypes...),
		bakeapi.ErrWorkerStopping,
	)
	o.RetryPolicy = &rp
	return workflow.WithActivityOptions(ctx, o)
}

// stopped accounts for slice k's activity failing with err; ok says err is
// a graceful stop handed back to the split. A stop queues the slice to start
// again, unless the slice has spent its attempts, those before the stop and
// the stop itself if it saved nothing: then it returns why.
func (s *sliceStops) stopped(k int, err error) (exhausted error, ok bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != bakeapi.ErrWorkerStopping {
		return nil, false
	}
	var detail bakeapi.SliceStop
	if app.Details(&detail) != nil || detail.Attempt < 1 {
		// A stop without its detail does not say what it saved: it
		// costs an attempt.
		detail = bakeapi.SliceStop{Attempt: 1}
	}
	st := s.byIndex[k]
	st.Slice = k
	st.Stops++
	st.Spent += detail.Attempt - 1
	if !detail.Saved {
		st.Spent++
	}
	s.byIndex[k] = st
	if st.Spent >= s.max {
		return fmt.Errorf(
			"its workers stopped it %d times, and it has spent its %d attempts "+
				"(policy.slice-max-attempts) on failures and on stops that saved no progress; "+
				"its checkpoints and finished MLPs are kept: "+
				"restart the bake once workers can run it",
			st.Stops,
			s.max,
		), true
	}
	s.queue = append(s.queue, k)
	return nil, true
}

// next is the first handed-back slice, removed from the queue.
func (s *sliceStops) next() (int, bool) {
	if len(s.queue) == 0 {
		return 0, false
	}
	k := s.queue[0]
	s.queue = s.queue[1:]
	return k, true
}

// pending is the queue with each slice's account, for the next run's cursor.
func (s *sliceStops) pending() []bakeapi.StoppedSlice {
	var out []bakeapi.StoppedSlice
	for _, k := range s.queue {
		out = append(out, s.byIndex[k])
	}
	return out
}
