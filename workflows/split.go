package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// Every run of a split stays far below Temporal's history warning (10,240
// events; a run fails at 51,200) however many slices the split has: a run
// stops starting slices when its history could pass runEventBudget, lets the
// running ones finish, and continues as new with a SplitCursor.
//
// That drain is what continuing as new costs. The slices of the window
// finish one by one over up to a slice's duration, and a GPU whose slice
// finished gets no other until the next run starts them all at once. With
// hour-long slices each continue-as-new idles the window's GPUs for about
// half an hour each (window × slice / 2 of GPU time), against the ~830
// slices ((runEventBudget − runStartEvents) / sliceEvents) a run bakes:
// about window / 1,660 of the fleet's time, 0.5% for 8 GPUs, 4% for 64,
// 13% for 256. A larger budget cuts it, up to the history warning.
//
// The server's suggestion, workflow.GetInfo(ctx).GetContinueAsNewSuggested(),
// is deliberately not a stop condition. It comes from
// limit.historyCount.suggestContinueAsNew, 4,096 events by default: below
// runEventBudget, it would make every run 18% shorter (~680 slices), and
// add drains; or from limit.historySize.suggestContinueAsNew, 4 MiB, which
// the budget never reaches: a split's events average ~220 bytes, so 5,000
// of them are ~1.1 MB.
var runEventBudget = 5000

// sliceEvents bounds what one slice adds to a run's history: scheduled,
// started and closed, as retries add none, plus a workflow task's
// scheduled, started and completed when its completion arrives alone.
const sliceEvents = 6

// runStartEvents bounds the events of a run before its first slice: its
// start and first workflow task, with room to spare.
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

// SplitWorkflow fans the split's slices out to the GPU queue, at most
// MaxInFlight at a time, continuing as new whenever a run's history is full.
// The bake merges them beside it, as they are committed.
//
// MaxInFlight 0 is auto: the window is the number of workers polling the GPU
// queue, counted by a local activity when the run starts and again at most
// once a minute while slices wait for room, so that joining workers get work
// within a minute. Within a run the window never shrinks, because a worker
// busy with a slice does not poll and drops out of the server's count; each
// run starts from a fresh count, which is how departed workers leave it.
func SplitWorkflow(ctx workflow.Context, in bakeapi.SplitInput) (bakeapi.SplitOutput, error) {
	s, err := newSplitRun(ctx, in)
	if err != nil {
		return bakeapi.SplitOutput{}, err
	}
	// Step 1. Under seed protocol 4.0, name the split's MLPs before its first slice.
	if err := s.name(ctx); err != nil {
		return bakeapi.SplitOutput{}, err
	}
	// Step 2. A sliding window of BakeSlice activities, as long as the run's history has room.
	if err := s.bake(ctx); err != nil {
		return bakeapi.SplitOutput{}, err
	}
	if s.left() {
		return bakeapi.SplitOutput{}, s.continueAsNew(ctx)
	}
	s.prog.Stage = bakeapi.StageDone
	s.prog.SlicesRunning = 0
	return bakeapi.SplitOutput{NMLPs: s.nMLPs, Slices: s.nSlices}, nil
}

// splitRun is one run of a SplitWorkflow: the window of running slices,
// the run's account of its history, and what the progress query answers.
// Its methods run on the workflow's one goroutine, the selector's callbacks
// included, so they share its fields without locks.
type splitRun struct {
	in      bakeapi.SplitInput
	nMLPs   int                 // MLPs in the split
	nSlices int                 // slices in the split
	cursor  bakeapi.SplitCursor // where this run began
	stops   sliceStops

	prog   bakeapi.SplitProgress
	gauges gauges

	selector workflow.Selector
	next     int       // the first slice no run has started
	running  int       // slices in flight
	started  int       // slices this run started, restarts of stopped ones included
	events   int       // this run's own bound of its history's length
	window   int       // the most slices in flight
	auto     bool      // the window is the count of GPU workers
	counted  time.Time // when the GPU workers were last counted
	timerSet bool      // a recount timer is pending
	err      error     // the first failure: no slice starts after it
}

// newSplitRun starts a run from its input: the cursor, the slices handed
// back by the previous run, the progress query and gauges.
func newSplitRun(ctx workflow.Context, in bakeapi.SplitInput) (*splitRun, error) {
	s := &splitRun{
		in:      in,
		nMLPs:   in.Split.NMLPs,
		nSlices: bakeapi.SliceCount(in.Split.NMLPs, in.SliceSize),
		cursor:  bakeapi.SplitCursor{StartedAt: workflow.Now(ctx)},
	}
	if in.Cursor != nil {
		s.cursor = *in.Cursor
	}
	if in.Seeds.Merged {
		// A restart of a bake that merged this split before: its slices'
		// intermediates may be gone, and the merge finds its result committed.
		s.cursor.Next = s.nSlices
	}
	s.stops = sliceStops{max: in.Policy.SliceMaxAttempts, byIndex: map[int]bakeapi.StoppedSlice{}}
	s.stops.resume(s.cursor.Stopped)
	// Slice k covers whestbench's --slice k/nSlices:
	// [k·nMLPs/nSlices, (k+1)·nMLPs/nSlices).
	if _, err := bakeapi.SliceRange(0, s.nSlices, s.nMLPs); err != nil {
		return nil, err
	}
	s.selector = workflow.NewSelector(ctx)
	s.next = s.cursor.Next
	s.events = runStartEvents
	s.window = in.MaxInFlight
	s.auto = in.MaxInFlight == 0
	return s, s.watch(ctx)
}

// watch sets up the progress query, counting the slices the cursor says
// are committed, and the gauges.
func (s *splitRun) watch(ctx workflow.Context) error {
	s.prog = bakeapi.SplitProgress{
		Split:       s.in.Split.Name,
		Stage:       bakeapi.StageBaking,
		MLPsTotal:   s.nMLPs,
		SlicesTotal: s.nSlices,
		SlicesDone:  s.cursor.Next,
		StartedAt:   s.cursor.StartedAt,
		MaxInFlight: s.window,
	}
	if s.cursor.Next > 0 {
		s.prog.MLPsDone = s.sliceRange(s.cursor.Next - 1).End
	}
	for _, k := range s.stops.queue {
		s.prog.SlicesDone--
		s.prog.MLPsDone -= s.sliceRange(k).Len()
	}
	if err := workflow.SetQueryHandler(
		ctx,
		bakeapi.ProgressQuery,
		func() (bakeapi.SplitProgress, error) { return s.prog, nil },
	); err != nil {
		return err
	}
	s.gauges = newGauges(ctx, s.in.BakeID, s.in.Split.Name)
	s.gauges.mlps(s.nMLPs)
	return nil
}

// sliceRange is slice k's MLPs; 0 <= k < count, checked by newSplitRun.
func (s *splitRun) sliceRange(k int) bakeapi.Range {
	r, _ := bakeapi.SliceRange(k, s.nSlices, s.nMLPs)
	return r
}

// left says whether slices remain to start: new ones, or stopped ones handed back.
func (s *splitRun) left() bool { return s.next < s.nSlices || len(s.stops.queue) > 0 }

// name runs NameSplit on the GPU queue when a protocol-4.0 split's first
// run starts: its names come from the salt, which only GPU workers hold, and
// from the whole split, for collision suffixes, so one activity writes them all
// instead of every slice of the first wave deriving the whole split. Later
// runs, continued as new, and a split merged before have them or need none.
func (s *splitRun) name(ctx workflow.Context) error {
	if s.in.Spec.Protocol() != bakeapi.SeedProtocolV4 || s.in.Cursor != nil || s.in.Seeds.Merged {
		return nil
	}
	actx := sliceOptions(ctx, s.in.Policy, s.in.GPUQueue, "name split "+s.in.Split.Name)
	_, err := nameSplit.run(actx, bakeapi.NameSplitInput{
		BakeID:      s.in.BakeID,
		Split:       s.in.Split.Name,
		NMLPs:       s.nMLPs,
		SeedsKey:    s.in.Seeds.SeedsKey,
		SeedsSHA256: s.in.Seeds.SHA256,
		Salt:        s.in.Spec.Salt,
	})
	s.events += sliceEvents // as many events as a slice's
	if err != nil {
		return failed(err, "naming the MLPs of split %s", s.in.Split.Name)
	}
	return nil
}

// bake keeps the window full while the history has room, and returns once
// no slice of the run is running: all started ones committed or handed
// back, or the first failure. On a failure the running slices still
// finish: their MLPs are kept for a restart.
func (s *splitRun) bake(ctx workflow.Context) error {
	if s.auto && s.left() {
		s.recount(ctx)
	}
	for {
		s.fill(ctx)
		if s.running == 0 {
			return s.err
		}
		s.wakeToRecount(ctx)
		s.prog.SlicesRunning = s.running
		s.report()
		s.selector.Select(ctx)
		if s.waiting(ctx) && workflow.Now(ctx).Sub(s.counted) >= recountEvery {
			s.recount(ctx)
		}
	}
}

// fill starts slices while the window and the history have room: the ones
// handed back first, then new ones.
func (s *splitRun) fill(ctx workflow.Context) {
	for s.err == nil && s.left() && s.running < s.window && s.room(ctx) {
		k, ok := s.stops.next()
		if !ok {
			k = s.next
			s.next++
		}
		s.start(ctx, k)
	}
}

// room says whether the run's history can take one more slice: by this
// run's own count, and by the server's, which also sees what the count
// cannot, such as workflow task retries after a worker crash.
func (s *splitRun) room(ctx workflow.Context) bool {
	used := max(s.events, workflow.GetInfo(ctx).GetCurrentHistoryLength()+sliceEvents*s.running)
	return used+sliceEvents <= runEventBudget ||
		(s.running == 0 && s.started == 0) // every run makes progress
}

// start schedules slice k on the GPU queue.
func (s *splitRun) start(ctx workflow.Context, k int) {
	r := s.sliceRange(k)
	actx := sliceOptions(
		ctx,
		s.in.Policy,
		s.in.GPUQueue,
		fmt.Sprintf("%s MLPs %d-%d", s.in.Split.Name, r.Start, r.End-1),
	)
	actx = s.stops.options(actx, k)
	f := bakeSlice.start(actx, bakeapi.BakeSliceInput{
		BakeID:      s.in.BakeID,
		Split:       s.in.Split.Name,
		Config:      s.in.Split.Config,
		Slice:       k,
		Start:       r.Start,
		End:         r.End,
		NMLPs:       s.nMLPs,
		SeedsKey:    s.in.Seeds.SeedsKey,
		SeedsSHA256: s.in.Seeds.SHA256,
		Spec:        s.in.Spec,
		Fingerprint: s.in.Split.Fingerprint,
		CreatedAt:   s.in.CreatedAt,
	})
	s.running++
	s.started++
	s.events += sliceEvents
	// The output is not read: a committed slice is at its deterministic key.
	s.selector.AddFuture(f.Future, func(f workflow.Future) { s.finished(ctx, k, f.Get(ctx, nil)) })
}

// finished accounts for slice k's activity closing with err.
func (s *splitRun) finished(ctx workflow.Context, k int, err error) {
	s.running--
	r := s.sliceRange(k)
	if err != nil {
		what := fmt.Sprintf(
			"slice %d (MLPs %d-%d) of split %s",
			k,
			r.Start,
			r.End-1,
			s.in.Split.Name,
		)
		if ctx.Err() == nil {
			if stop, ok := s.stops.stopped(k, err); ok {
				if stop == nil {
					return // handed back: started again, first, when there is room
				}
				// Not wrapping err: status shows the innermost failure, and the
				// last stop's "handed back" is not how this ended.
				err = temporal.NewNonRetryableApplicationError(
					what+": "+stop.Error(),
					bakeapi.ErrWorkerStopping,
					nil,
				)
			}
		}
		if s.err == nil {
			s.err = failed(err, "%s", what)
		}
		return
	}
	s.prog.SlicesDone++
	s.prog.MLPsDone += r.Len()
	elapsed := workflow.Now(ctx).Sub(s.prog.StartedAt)
	total := float64(elapsed) * float64(s.nMLPs) / float64(s.prog.MLPsDone) // at the pace so far
	s.prog.ETA = s.prog.StartedAt.Add(time.Duration(total))
	s.report()
}

// waiting says whether an auto window has slices waiting for room, so that
// more GPU workers would get work.
func (s *splitRun) waiting(ctx workflow.Context) bool {
	return s.auto && s.err == nil && ctx.Err() == nil && s.left()
}

// wakeToRecount sets a timer, if none is pending, so that an auto window
// is counted again even if no slice finishes for long.
func (s *splitRun) wakeToRecount(ctx workflow.Context) {
	if !s.waiting(ctx) || s.timerSet || !s.room(ctx) {
		return
	}
	s.timerSet = true
	s.events += timerEvents
	timer := workflow.NewTimer(ctx, recountEvery)
	s.selector.AddFuture(timer, func(workflow.Future) { s.timerSet = false })
}

// recount counts the GPU workers and widens the window to their number; it
// never narrows it, for the reason SplitWorkflow gives, and a failed count
// keeps it.
func (s *splitRun) recount(ctx workflow.Context) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	w, err := gpuWorkers.run(lctx, bakeapi.GPUWorkersInput{Queue: s.in.GPUQueue})
	if err != nil {
		workflow.GetLogger(ctx).Warn(
			"counting the GPU workers failed; the split keeps its window",
			"window", max(s.window, 1),
			"error", err,
		)
	}
	s.events += countEvents
	s.counted = workflow.Now(ctx)
	s.window = max(s.window, w.Workers, 1)
	s.prog.MaxInFlight = s.window
}

// report updates the gauges.
func (s *splitRun) report() { s.gauges.progress(s.prog.MLPsDone, s.running) }

// continueAsNew ends the run with the cursor of the next: every slice this
// run started is committed or handed back.
func (s *splitRun) continueAsNew(ctx workflow.Context) error {
	next := s.in
	next.Cursor = &bakeapi.SplitCursor{
		Next:      s.next,
		Runs:      s.cursor.Runs + 1,
		StartedAt: s.cursor.StartedAt,
		Stopped:   s.stops.pending(),
	}
	return splitWorkflow.continueAsNew(ctx, next)
}
