package workflows

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// Every run of a split stays far below Temporal's history warning (10,240
// events; a run fails at 51,200) however many slices the split has: a run
// stops starting slices when its history could pass runEventBudget, lets the
// running ones finish, and continues as new with a SplitCursor.
var runEventBudget = 5000

// sliceEvents bounds what one slice adds to a run's history: scheduled,
// started and closed (retries add none), plus a workflow task (scheduled,
// started, completed) when its completion arrives alone.
const sliceEvents = 6

// runStartEvents bounds the events of a run before its first slice: start,
// first workflow task, version marker and search attribute.
const runStartEvents = 8

// countEvents bounds what a count of the GPU workers adds to a run's
// history: its local activity's marker, and a workflow task at worst.
const countEvents = 4

// timerEvents bounds what a recount timer adds: started, fired and a
// workflow task.
const timerEvents = 5

// recountEvery is how often a split whose max-in-flight is auto counts the
// GPU workers again while it has slices waiting for room.
const recountEvery = time.Minute

// fleetChange is the workflow.GetVersion change that introduced the event
// budget (continue-as-new) and slices whose cancellation the split waits
// for: histories recorded before it ran every slice in one run and closed
// as soon as it asked its slices to stop.
const fleetChange = "split-fleet"

// stopsChange is the workflow.GetVersion change after which a slice that its
// worker stopped gracefully (ErrWorkerStopping: spot preemption, a rolling
// upgrade) comes back to the split, which starts it again at once instead of
// letting Temporal retry it: a retry spends one of policy.slice-max-attempts,
// which guard against poison slices, and a long slice on a preemptible fleet
// could be stopped more often than that while making progress each time.
// Only stops that saved nothing spend an attempt. Histories recorded before
// it retried stops like any failure.
const stopsChange = "slice-stops"

// SplitWorkflow fans the split's slices out to the GPU queue, at most
// MaxInFlight at a time, continuing as new whenever a run's history is full,
// then merges them.
//
// MaxInFlight 0 is auto: the window is the number of workers polling the GPU
// queue, counted by a local activity when the run starts and again at most
// once a minute while slices wait for room, so that joining workers get work
// within a minute. Within a run the window never shrinks, because a worker
// busy with a slice does not poll and drops out of the server's count; each
// run starts from a fresh count, which is how departed workers leave it.
func SplitWorkflow(ctx workflow.Context, in bakeapi.SplitInput) (bakeapi.SplitOutput, error) {
	var out bakeapi.SplitOutput
	n := in.Split.NMLPs
	count := bakeapi.SliceCount(n, in.SliceSize)
	cur := bakeapi.SplitCursor{StartedAt: workflow.Now(ctx)}
	if in.Cursor != nil {
		cur = *in.Cursor
	}
	if in.Seeds.Merged {
		// A restart of a bake that merged this split before: its slices'
		// intermediates may be gone, and the merge finds its result committed.
		cur.Next = count
	}
	budget, waitCancel := runEventBudget, true
	if workflow.GetVersion(ctx, fleetChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		budget, waitCancel = math.MaxInt, false
	}
	drain := workflow.GetVersion(ctx, drainChange, workflow.DefaultVersion, 1) == 1
	stops := sliceStops{max: in.Policy.SliceMaxAttempts, byIndex: map[int]bakeapi.StoppedSlice{}}
	if workflow.GetVersion(ctx, stopsChange, workflow.DefaultVersion, 1) == 1 {
		stops.handBack = true
		for _, st := range cur.Stopped {
			stops.byIndex[st.Slice] = st
			stops.queue = append(stops.queue, st.Slice)
		}
	}
	// Slice k covers whestbench's --slice k/count: [k·n/count, (k+1)·n/count).
	if _, err := bakeapi.SliceRange(0, count, n); err != nil {
		return out, err
	}
	sliceRange := func(k int) bakeapi.Range {
		r, _ := bakeapi.SliceRange(k, count, n) // 0 <= k < count, checked above
		return r
	}
	prog := bakeapi.SplitProgress{Split: in.Split.Name, Stage: bakeapi.StageBaking, MLPsTotal: n, SlicesTotal: count,
		SlicesDone: cur.Next, StartedAt: cur.StartedAt}
	if cur.Next > 0 {
		prog.MLPsDone = sliceRange(cur.Next - 1).End
	}
	for _, k := range stops.queue {
		prog.SlicesDone--
		prog.MLPsDone -= sliceRange(k).Len()
	}
	if err := workflow.SetQueryHandler(ctx, bakeapi.ProgressQuery, func() (bakeapi.SplitProgress, error) { return prog, nil }); err != nil {
		return out, err
	}
	// Progress gauges for the fleet dashboard's ETA, through the SDK's
	// metrics handler: not commands, so they change no history, and the SDK
	// mutes them while replaying. After a control worker restarts they show
	// again with the next finished slice.
	mh := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"bake_id": in.BakeID, "split": in.Split.Name})
	mh.Gauge(MetricSplitMLPs).Update(float64(n))

	// Step 1. Sliding window of BakeSlice activities, as long as the run's history has room.
	sel := workflow.NewSelector(ctx)
	var firstErr error
	next, running, started, events := cur.Next, 0, 0, runStartEvents
	report := func() {
		mh.Gauge(MetricSplitMLPsDone).Update(float64(prog.MLPsDone))
		mh.Gauge(MetricSplitSlicesRunning).Update(float64(running))
	}
	window, auto := in.MaxInFlight, in.MaxInFlight == 0
	var counted time.Time
	recount := func() {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			ScheduleToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
		var w bakeapi.GPUWorkersOutput
		err := workflow.ExecuteLocalActivity(lctx, bakeapi.GPUWorkersActivity, bakeapi.GPUWorkersInput{Queue: in.GPUQueue}).Get(ctx, &w)
		if err != nil {
			workflow.GetLogger(ctx).Warn("counting the GPU workers failed; the split keeps its window", "window", max(window, 1), "error", err)
		}
		events += countEvents
		counted = workflow.Now(ctx)
		window = max(window, w.Workers, 1)
		prog.MaxInFlight = window
	}
	prog.MaxInFlight = window
	left := func() bool { return next < count || len(stops.queue) > 0 }
	if auto && left() {
		recount()
	}
	start := func(k int) {
		r := sliceRange(k)
		actx := sliceOptions(ctx, in.Policy, in.GPUQueue, fmt.Sprintf("%s MLPs %d-%d", in.Split.Name, r.Start, r.End-1), waitCancel)
		if stops.handBack {
			actx = stops.options(actx, k)
		}
		f := workflow.ExecuteActivity(actx, bakeapi.BakeSliceActivity, bakeapi.BakeSliceInput{
			BakeID: in.BakeID, Split: in.Split.Name, Config: in.Split.Config, Slice: k, Start: r.Start, End: r.End,
			NMLPs: n, SeedsKey: in.Seeds.SeedsKey, SeedsSHA256: in.Seeds.SHA256, Spec: in.Spec,
			Fingerprint: in.Split.Fingerprint, CreatedAt: in.CreatedAt})
		running++
		started++
		events += sliceEvents
		sel.AddFuture(f, func(f workflow.Future) {
			running--
			if err := f.Get(ctx, nil); err != nil {
				what := fmt.Sprintf("slice %d (MLPs %d-%d) of split %s", k, r.Start, r.End-1, in.Split.Name)
				if ctx.Err() == nil {
					if stop, ok := stops.stopped(k, err); ok {
						if stop == nil {
							return // handed back: started again, first, when there is room
						}
						// Not wrapping err: status shows the innermost failure, and the
						// last stop's "handed back" is not how this ended.
						err = temporal.NewNonRetryableApplicationError(what+": "+stop.Error(), bakeapi.ErrWorkerStopping, nil)
					}
				}
				if firstErr == nil {
					firstErr = failed(err, "%s", what)
				}
				return
			}
			prog.SlicesDone++
			prog.MLPsDone += r.Len()
			elapsed := workflow.Now(ctx).Sub(prog.StartedAt)
			prog.ETA = prog.StartedAt.Add(time.Duration(float64(elapsed) * float64(n) / float64(prog.MLPsDone)))
			report()
		})
	}
	// room says whether the run's history can take one more slice: by this
	// run's own count, and by the server's, which also sees what the count
	// cannot (workflow task retries after a worker crash).
	room := func() bool {
		used := max(events, workflow.GetInfo(ctx).GetCurrentHistoryLength()+sliceEvents*running)
		return used+sliceEvents <= budget || (running == 0 && started == 0) // every run makes progress
	}
	waiting := func() bool { return auto && firstErr == nil && ctx.Err() == nil && left() }
	timerSet := false
	for {
		for firstErr == nil && left() && running < window && room() {
			if k, ok := stops.next(); ok {
				start(k)
				continue
			}
			start(next)
			next++
		}
		if running == 0 {
			break
		}
		if waiting() && !timerSet && room() {
			// Wake to recount even if no slice finishes for long.
			timerSet = true
			events += timerEvents
			sel.AddFuture(workflow.NewTimer(ctx, recountEvery), func(workflow.Future) { timerSet = false })
		}
		prog.SlicesRunning = running
		report()
		sel.Select(ctx) // on a failure, let the running slices finish: their MLPs are kept for a retry
		if waiting() && workflow.Now(ctx).Sub(counted) >= recountEvery {
			recount()
		}
	}
	if firstErr != nil {
		return out, firstErr
	}
	if left() {
		// Every slice this run started is committed or handed back: the next run goes on from there.
		cont := in
		cont.Cursor = &bakeapi.SplitCursor{Next: next, Runs: cur.Runs + 1, StartedAt: cur.StartedAt, Stopped: stops.pending()}
		return out, workflow.NewContinueAsNewError(ctx, bakeapi.SplitWorkflowName, cont)
	}

	// Step 2. Merge the slices into the complete split.
	prog.Stage, prog.SlicesRunning = bakeapi.StageMerging, 0
	report()
	var m bakeapi.MergeSplitOutput
	mctx := controlOptions(ctx, drain, in.Policy, in.Policy.MergeTimeout, "merge split "+in.Split.Name)
	if err := workflow.ExecuteActivity(mctx, bakeapi.MergeSplitActivity, bakeapi.MergeSplitInput{
		BakeID: in.BakeID, Split: in.Split.Name, NMLPs: n, NSlices: count, CreatedAt: in.CreatedAt,
		KeepIntermediates: in.KeepIntermediates}).Get(ctx, &m); err != nil {
		return out, failed(err, "merge of split %s", in.Split.Name)
	}
	prog.Stage = bakeapi.StageDone
	return bakeapi.SplitOutput{MergedPrefix: m.Prefix, ManifestSHA256: m.ManifestSHA256, NMLPs: m.NMLPs, Slices: count}, nil
}

// sliceStops is a split run's account of the slices that workers stopped
// gracefully (stopsChange): which wait to start again, and what each stop
// cost of the slice's attempts.
type sliceStops struct {
	handBack bool  // stopped slices come back to the workflow (stopsChange)
	max      int32 // policy.slice-max-attempts
	byIndex  map[int]bakeapi.StoppedSlice
	queue    []int // handed back, to start again in this order
}

// options gives slice k the attempts it has left, and makes a stop end the
// activity rather than be retried by Temporal.
func (s *sliceStops) options(ctx workflow.Context, k int) workflow.Context {
	o := workflow.GetActivityOptions(ctx)
	rp := *o.RetryPolicy
	rp.MaximumAttempts = s.max - s.byIndex[k].Spent // ≥ 1: stopped refuses a slice with none left
	rp.NonRetryableErrorTypes = append(append([]string(nil), rp.NonRetryableErrorTypes...), bakeapi.ErrWorkerStopping)
	o.RetryPolicy = &rp
	return workflow.WithActivityOptions(ctx, o)
}

// stopped accounts for slice k's activity failing with err; ok says err is
// a graceful stop handed back to the split. A stop queues the slice to start
// again, unless the slice has spent its attempts (those before the stop, and
// the stop itself if it saved nothing): then it returns why.
func (s *sliceStops) stopped(k int, err error) (exhausted error, ok bool) {
	var app *temporal.ApplicationError
	if !s.handBack || !errors.As(err, &app) || app.Type() != bakeapi.ErrWorkerStopping {
		return nil, false
	}
	var detail bakeapi.SliceStop
	if app.Details(&detail) != nil || detail.Attempt < 1 {
		// A GPU worker from before SliceStop (GPU workers may be upgraded
		// after the control workers) does not say: the stop costs an
		// attempt, as every stop did then.
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
		return fmt.Errorf("its workers stopped it %d times, and it has spent its %d attempts (policy.slice-max-attempts) on failures and on stops that saved no progress; "+
			"its checkpoints and finished MLPs are kept: restart the bake once workers can run it", st.Stops, s.max), true
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
