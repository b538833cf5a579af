package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// progressWatch is how watchProgress heartbeats one long transfer.
type progressWatch[P any] struct {
	// checks is how many times per heartbeat timeout it looks for progress.
	checks int
	// quiet is after how many checks without progress work is stopped: a
	// whole heartbeat timeout when 0. Fewer than checks stop it before
	// Temporal times the attempt out, so that it fails with stalled's error.
	quiet int
	// heartbeat is the details recorded for the last progress reported.
	heartbeat func(P) any
	// stalled is the error that stops work after quiet without progress
	// (the time is given), last being what it reported last.
	stalled func(last P, timeout time.Duration) error
}

// watchProgress runs work and heartbeats when, and only when, it moves: each
// call of report is a move. Temporal then times out an attempt whose work
// stops moving; and since it answers a heartbeat of an attempt it gave up by
// cancelling ctx, while this one sends none, work that made no progress for
// a whole heartbeat timeout is stopped here with w.stalled as the cause (and
// that cause is what returns when work fails because of it): an abandoned
// attempt never keeps going beside its retry. w.quiet stops it sooner. The last progress reported
// returns too. Outside an activity, or without a heartbeat timeout, work
// just runs.
func watchProgress[P any](
	ctx context.Context,
	w progressWatch[P],
	work func(ctx context.Context, report func(P)) error,
) (P, error) {
	var mu sync.Mutex
	var latest P
	var moves int64
	report := func(p P) {
		mu.Lock()
		latest, moves = p, moves+1
		mu.Unlock()
	}
	last := func() (P, int64) {
		mu.Lock()
		defer mu.Unlock()
		return latest, moves
	}
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).HeartbeatTimeout <= 0 {
		err := work(ctx, report)
		p, _ := last()
		return p, err
	}
	timeout := activity.GetInfo(ctx).HeartbeatTimeout
	wctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	done := make(chan error, 1)
	go func() { done <- work(wctx, report) }()
	tick := time.NewTicker(timeout / time.Duration(w.checks))
	defer tick.Stop()
	quiet := timeout
	if w.quiet > 0 {
		quiet = timeout * time.Duration(w.quiet) / time.Duration(w.checks)
	}
	seen, moved := int64(0), time.Now()
	for {
		select {
		case err := <-done:
			if cause := context.Cause(wctx); err != nil && cause != nil && ctx.Err() == nil {
				err = cause
			}
			p, _ := last()
			return p, err
		case <-tick.C:
			switch p, n := last(); {
			case n != seen:
				seen, moved = n, time.Now()
				activity.RecordHeartbeat(ctx, w.heartbeat(p))
			case time.Since(moved) >= quiet:
				stop(w.stalled(p, quiet))
			}
		}
	}
}
