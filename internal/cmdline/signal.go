package cmdline

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Interrupted is how a command that a signal stopped ends: SIGINT, from
// Ctrl-C, or SIGTERM. Its exit code is 128 + the signal's number, the
// shells' convention, 130 for Ctrl-C, so a script can tell "stopped" from
// "failed".
type Interrupted struct {
	Signal syscall.Signal
	// Err is what the command returned once stopped. A bare
	// context.Canceled says nothing to a user and is not shown; anything
	// else is, such as what a stopped `watch` leaves running.
	Err error
}

func (e Interrupted) Error() string {
	if e.Err != nil && !errors.Is(e.Err, context.Canceled) {
		return e.Err.Error()
	}
	if e.Signal == syscall.SIGINT {
		return "interrupted (Ctrl-C)"
	}
	return "interrupted by " + signalName(e.Signal)
}

func (e Interrupted) Unwrap() error { return e.Err }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// NotifyContext is a context that the first SIGINT or SIGTERM cancels,
// with Interrupted as its cause, which Interruption reads. That first
// signal also restores the default action, so a second Ctrl-C ends the
// process at once, for a command that does not stop soon enough.
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-signals:
			signal.Stop(signals)
			sig, _ := s.(syscall.Signal)
			cancel(Interrupted{Signal: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		cancel(context.Canceled)
	}
}

// Interruption is err as the error of a command that ctx's signal stopped,
// and err itself if no signal came or the command succeeded all the same.
func Interruption(ctx context.Context, err error) error {
	var in Interrupted
	if err == nil || !errors.As(context.Cause(ctx), &in) {
		return err
	}
	in.Err = err
	return in
}
