package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Stack is a dev stack that Up left running.
type Stack struct {
	Options Options // with defaults filled and paths absolute
	Servers []Running
}

// Up starts MinIO and the Temporal dev server unless they already run from
// opts.Dir, waits until both are healthy and creates opts.Buckets, telling
// out what it did. It is safe to run again at any time.
func Up(ctx context.Context, opts Options, out io.Writer) (*Stack, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st := &Stack{Options: o}
	for _, c := range Components {
		r, err := Start(ctx, o, c)
		if err != nil {
			return nil, err
		}
		if r.AlreadyRunning {
			fmt.Fprintf(out, "%-8s already running (pid %d) on %s\n", c, r.PID, r.Addr)
		} else {
			fmt.Fprintf(out, "%-8s started (pid %d) on %s, log %s\n", c, r.PID, r.Addr, r.Log)
		}
		st.Servers = append(st.Servers, r)
	}
	return st, nil
}

// Down stops every component started from opts.Dir, telling out what it
// did. State (workflow database, objects) stays for the next Up.
func Down(opts Options, out io.Writer) error {
	var errs []error
	for _, c := range slices.Backward(Components) {
		pid, err := stop(opts, c)
		switch {
		case err != nil:
			errs = append(errs, err)
		case pid == 0:
			fmt.Fprintf(out, "%-8s not running\n", c)
		default:
			fmt.Fprintf(out, "%-8s stopped (pid %d)\n", c, pid)
		}
	}
	return errors.Join(errs...)
}

// State is what Status found for one component.
type State struct {
	Component Component
	PID       int // 0: not running
	Addr      string
	Healthy   bool
	Problem   string // why a running component is not healthy
}

// Status reports each component's process and health without changing
// anything.
func Status(ctx context.Context, opts Options) ([]State, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	var states []State
	for _, c := range Components {
		s, _ := o.server(c)
		st := State{Component: c, Addr: s.addr, PID: livePID(o.pidFile(c), o.bin(c))}
		if st.PID != 0 {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			if err := s.healthy(pctx); err != nil {
				st.Problem = err.Error()
			} else {
				st.Healthy = true
			}
			cancel()
		}
		states = append(states, st)
	}
	return states, nil
}
