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
		var r Running
		if o.MoveIfTaken {
			var moved Options
			r, moved, err = startMoving(ctx, o, c)
			for _, p := range movedPorts(o, moved) {
				fmt.Fprintf(out, "%-8s %s\n", c, p)
			}
			o = moved
			st.Options = moved
		} else {
			r, err = Start(ctx, o, c)
		}
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
	// Also when both were running already: a stack started before there
	// were records gets one.
	return st, o.writeRecord()
}

// Down stops every component started from opts.Dir, the pids its run/
// holds, never whatever listens on its ports, telling out what it did.
// State stays for the next Up: the workflow database, the objects, the
// record of its ports.
func Down(opts Options, out io.Writer) error {
	o, err := opts.withDefaults()
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range slices.Backward(Components) {
		s, _ := o.server(c)
		pid, err := stop(o, c)
		switch {
		case err != nil:
			errs = append(errs, err)
		case pid == 0:
			fmt.Fprintf(out, "%-8s not running from %s\n", c, o.Dir)
		default:
			fmt.Fprintf(out, "%-8s stopped (pid %d, %s)\n", c, pid, s.addr)
		}
	}
	return errors.Join(errs...)
}

// movedPorts says which ports of from Up moved to serve to.
func movedPorts(from, to Options) []string {
	var out []string
	for i, p := range from.ports() {
		if q := to.ports()[i]; q.port != p.port {
			out = append(out, fmt.Sprintf("port %d (%s) is taken: using %d instead",
				p.port, p.key, q.port))
		}
	}
	return out
}

// State is what Status found for one component.
type State struct {
	Component Component
	PID       int // 0: not running from this state directory
	Addr      string
	Healthy   bool
	Problem   string // why a running component is not healthy
	// Other is who else listens on Addr, a program this stack did not
	// start, as "pid 123: …"; "" when nobody does, or procfs cannot tell.
	// A server there is never taken for this stack's.
	Other string
}

// Status reports each component's process and health without changing
// anything: the servers of opts.Dir, on the ports its record holds unless
// opts gives others.
func Status(ctx context.Context, opts Options) ([]State, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	var states []State
	for _, c := range Components {
		s, _ := o.server(c)
		st := State{Component: c, Addr: s.addr, PID: livePID(o.pidFile(c), o.bin(c), s.state)}
		if h, found, _ := portHolder(s.ports[0].port); found && (h.PID == 0 || h.PID != st.PID) {
			st.Other = h.String()
		}
		switch {
		case st.PID == 0:
		case st.Other != "":
			st.Problem = fmt.Sprintf("%s is held by %s, not by this stack's server",
				s.addr, st.Other)
		default:
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
