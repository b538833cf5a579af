package bakeclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// WatchInput says which bake to follow, and what to do with each refresh.
type WatchInput struct {
	ID string
	// Every is the time between two refreshes.
	Every time.Duration
	// Each gets every refresh's status; an error ends the watch.
	Each func(Status) error
	// RideOut is how long the watch waits for a Temporal server that does
	// not answer, as during a restart or an upgrade, before it gives up
	// with a *ServerLost; 0 is DefaultRideOut.
	RideOut time.Duration
	// Outage, when set, hears when the server stops answering and when it
	// answers again.
	Outage func(Outage)
}

// DefaultRideOut rides out a server restart, which takes seconds, and a
// rolling upgrade of its services, which takes minutes.
const DefaultRideOut = 5 * time.Minute

// Outage is the Temporal server not answering a watch since Since: Err is
// its last error, or nil once it answers again, Over.
type Outage struct {
	Since time.Time
	Err   error
	Over  bool
}

// ServerLost ends a watch whose Temporal server did not answer for the
// whole ride-out: the bake itself runs on, on its workers.
type ServerLost struct {
	Address, Namespace string
	For                time.Duration
	Err                error // the last error
}

func (e *ServerLost) Error() string {
	return fmt.Sprintf("the Temporal server at %s (namespace %s) has not answered for %s: %v",
		e.Address, e.Namespace, e.For.Round(time.Second), e.Err)
}

func (e *ServerLost) Unwrap() error { return e.Err }

// Watch collects a bake's status every in.Every until the bake no longer
// runs, and returns its last status. Each refresh reads only what changed:
// the workflow input once per run, a closed workflow's history once. A
// split's counts never go down from one refresh to the next. A server
// that stops answering is asked again at each refresh, for up to
// in.RideOut.
func (c *Client) Watch(ctx context.Context, in WatchInput) (Status, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return Status{}, err
	}
	rideOut := in.RideOut
	if rideOut <= 0 {
		rideOut = DefaultRideOut
	}
	w := newWatcher(tc, c.cfg, in.ID)
	var last Status
	var down *Outage
	for {
		asked := time.Now()
		st, err := w.collect(ctx)
		switch {
		case err != nil && ctx.Err() == nil && unanswered(err):
			if down == nil {
				// Since the first call that went unanswered, which the
				// SDK has been retrying for up to its own timeout.
				down = &Outage{Since: asked}
			}
			down.Err = err
			if d := time.Since(down.Since); d >= rideOut {
				t := c.cfg.Temporal
				return last, &ServerLost{Address: t.Address, Namespace: t.Namespace, For: d, Err: err}
			}
			in.tell(*down)
		case err != nil:
			return st, err
		default:
			if down != nil {
				in.tell(Outage{Since: down.Since, Over: true})
				down = nil
			}
			last = st
			if err := in.Each(st); err != nil {
				return st, err
			}
			if !st.Running() {
				return st, nil
			}
		}
		if err := sleep(ctx, in.Every); err != nil {
			return last, err
		}
	}
}

func (in WatchInput) tell(o Outage) {
	if in.Outage != nil {
		in.Outage(o)
	}
}

// unanswered reports whether err is the server not answering rather than
// an answer: down, restarting, overloaded, or the call timed out. A bake
// that does not exist or credentials refused are answers.
func unanswered(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	var exhausted *serviceerror.ResourceExhausted
	if errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) {
		switch s.GRPCStatus().Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
			return true
		}
	}
	return false
}
