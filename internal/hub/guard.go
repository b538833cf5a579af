package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptrace"
	"sync"
	"time"
)

// Deadlines bound every Hub request, so that a Hub, a storage host or a
// network path that stops answering fails the request instead of holding
// a push for hours. The request is then retried, and in the end fails the
// push naming the host and the file. None bounds a whole transfer: a
// large LFS part may take long, but it must keep moving.
type Deadlines struct {
	// Connect bounds reaching the host: DNS, TCP connect, TLS handshake.
	Connect time.Duration
	// Headers bounds the wait for the answer's headers once the request
	// and its body are sent: the Hub's own work, such as a commit.
	Headers time.Duration
	// Idle bounds a body, sent or received, that moves no byte.
	Idle time.Duration
}

// DefaultDeadlines are generous: a slow Hub is waited for, a silent one
// is not.
var DefaultDeadlines = Deadlines{
	Connect: 30 * time.Second,
	Headers: 5 * time.Minute,
	Idle:    2 * time.Minute,
}

// ErrStalled matches a request that a deadline ended, a *StallError.
var ErrStalled = errors.New("the Hub stalled")

// Phases of a request, as a StallError names them.
const (
	phaseConnecting = "connecting"
	phaseSending    = "sending the request"
	phaseSource     = "reading the file to send from its source"
	phaseWaiting    = "waiting for the answer"
	phaseReceiving  = "receiving the answer"
)

// StallError is a request that made no progress within its deadline.
type StallError struct {
	Op      string // the call: "upload of data/x.parquet part 2", …
	Host    string // the host it went to
	Storage bool   // Host is the Hub's storage, not the Hub's API
	Phase   string
	After   time.Duration
}

func (e *StallError) Error() string {
	if e.Phase == phaseSource {
		return fmt.Sprintf("hub: %s: %s made no progress for %s: the source stalled, not the Hub",
			e.Op, e.Phase, e.After)
	}
	who := "the Hub at " + e.Host
	if e.Storage {
		who = "the Hub's storage at " + e.Host
	}
	return fmt.Sprintf("hub: %s: %s stalled: %s made no progress for %s",
		e.Op, who, e.Phase, e.After)
}

// Is matches ErrStalled.
func (e *StallError) Is(target error) bool { return target == ErrStalled }

// guard holds one request to its deadlines: a timer for the phase it is
// in, re-armed at every byte that moves; when it fires, it cancels the
// request with a *StallError as the cause.
type guard struct {
	deadlines Deadlines
	cancel    context.CancelCauseFunc
	stall     StallError // Op, Host and Storage; Phase and After when it fires

	mu       sync.Mutex
	timer    *time.Timer
	phase    string
	after    time.Duration
	deadline time.Time
	stopped  bool
}

// arm enters phase, which must make progress within after; 0 is unbounded.
func (g *guard) arm(phase string, after time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.phase, g.after = phase, after
	if after <= 0 {
		if g.timer != nil {
			g.timer.Stop()
		}
		return
	}
	g.deadline = time.Now().Add(after)
	if g.timer == nil {
		g.timer = time.AfterFunc(after, g.fire)
	} else {
		g.timer.Reset(after)
	}
}

func (g *guard) fire() {
	g.mu.Lock()
	if left := time.Until(g.deadline); g.stopped || left > 0 {
		// Re-armed as it fired: the new deadline stands.
		if !g.stopped {
			g.timer.Reset(left)
		}
		g.mu.Unlock()
		return
	}
	e := g.stall
	e.Phase, e.After = g.phase, g.after
	g.stopped = true
	g.mu.Unlock()
	g.cancel(&e)
}

// stop ends the guard: the request is over.
func (g *guard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.timer != nil {
		g.timer.Stop()
	}
}

// trace moves the guard through the request's phases as the transport
// reports them.
func (g *guard) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) {
			g.arm(phaseSending, g.deadlines.Idle)
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			g.arm(phaseWaiting, g.deadlines.Headers)
		},
		GotFirstResponseByte: func() {
			g.arm(phaseReceiving, g.deadlines.Idle)
		},
	}
}

// stalled is the *StallError that ended ctx, if one did.
func stalled(ctx context.Context) error {
	var se *StallError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return nil
}

// guardedBody is an answer's body under its guard: each read that moves
// bytes re-arms it, a read the guard ended returns its *StallError, and
// Close ends the request.
type guardedBody struct {
	body   io.ReadCloser
	guard  *guard
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		b.guard.arm(phaseReceiving, b.guard.deadlines.Idle)
	}
	if err != nil && err != io.EOF {
		if se := stalled(b.ctx); se != nil {
			err = se
		}
	}
	return n, err
}

func (b *guardedBody) Close() error {
	b.guard.stop()
	err := b.body.Close()
	b.cancel(nil)
	return err
}
