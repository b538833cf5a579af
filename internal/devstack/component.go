package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/whestbake/whestbake/internal/safetext"
)

// Component names one server of the stack.
type Component string

// The stack's servers, in start order.
const (
	MinIO    Component = "minio"
	Temporal Component = "temporal"
)

// Components lists every server in start order; Down stops them in reverse.
var Components = []Component{MinIO, Temporal}

// server is what starting and probing one component takes.
type server struct {
	args []string
	// state is the argument that names the state directory: a pid whose
	// command line lacks it is another stack's server, never this one's. A
	// copy of this directory holds that stack's pid files.
	state   string
	env     []string
	ports   []portKey
	addr    string
	healthy func(ctx context.Context) error // one quick probe
	prepare func(ctx context.Context) error // once healthy: buckets, search attributes
}

func (o Options) server(c Component) (server, error) {
	switch c {
	case MinIO:
		return o.minioServer(), nil
	case Temporal:
		return o.temporalServer(), nil
	}
	return server{}, fmt.Errorf("devstack: unknown component %q (want %s or %s)",
		c, MinIO, Temporal)
}

func (o Options) bin(c Component) string {
	return filepath.Join(o.BinDir, string(c))
}

func (o Options) pidFile(c Component) string {
	return filepath.Join(o.Dir, "run", string(c)+".pid")
}

func (o Options) logFile(c Component) string {
	return filepath.Join(o.Dir, "logs", string(c)+".log")
}

// Running describes a component that Start left running.
type Running struct {
	Component      Component
	PID            int
	Addr           string // host:port it serves on
	Log            string
	AlreadyRunning bool // it was running and healthy before Start was called
}

// The fix-its of Start's errors about a component already running.
const (
	fixDownToChange = "run `whestbake dev down` first to change them"
	fixRestart      = "run `whestbake dev down`, then `whestbake dev up` " +
		"(with --move-if-taken to move to free ports)"
	fixUnhealthy = "run `whestbake dev down` and start again"
	fixMissing   = "run `make tools` to build it, or point --bin-dir at a directory holding it"
)

// Start starts one component detached and waits until it is healthy, then
// creates what Options asks for: buckets, search attributes. A component
// already running from the same Dir is left as it is.
func Start(ctx context.Context, opts Options, c Component) (Running, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Running{}, err
	}
	s, err := o.server(c)
	if err != nil {
		return Running{}, err
	}
	r := Running{Component: c, Addr: s.addr, Log: o.logFile(c)}
	if pid := livePID(o.pidFile(c), o.bin(c), s.state); pid != 0 {
		// Ports or paths changed since it started: probing the new port
		// would only time out, so say what to do at once.
		if argv, ok := cmdline(pid); ok && !slices.Equal(argv[1:], s.args) {
			return r, fmt.Errorf("devstack: %s (pid %d) is running with other options (%s): %s",
				c, pid, strings.Join(argv[1:], " "), fixDownToChange)
		}
		// The pid runs, but a health probe of the address would pass for
		// any server there: it counts only if the port is this pid's.
		if h, other := otherHolder(ctx, pid, s.ports[0].port); other {
			return r, fmt.Errorf("devstack: %s (pid %d) runs from %s, "+
				"but %s is held by %s, not by it: %s", c, pid, o.Dir, s.addr, h, fixRestart)
		}
		err := waitHealthy(ctx, o, s, func() error {
			if alive(pid) {
				return nil
			}
			return errExited
		})
		if err == nil {
			r.PID = pid
			r.AlreadyRunning = true
			return r, s.prepare(ctx)
		}
		if !errors.Is(err, errExited) {
			return r, fmt.Errorf("devstack: %s is running (pid %d) but not healthy on %s: %w; "+
				"see %s, or %s", c, pid, s.addr, err, r.Log, fixUnhealthy)
		}
		// It died, as in a crash just before this call: start a new one.
	}
	if _, err := os.Stat(o.bin(c)); err != nil {
		return r, fmt.Errorf("devstack: %s not found: %s", o.bin(c), fixMissing)
	}
	for _, p := range s.ports {
		if err := checkFree(p); err != nil {
			return r, err
		}
	}
	if err := o.writeRecord(); err != nil {
		return r, err
	}
	pid, exited, err := spawn(proc{
		bin:     o.bin(c),
		args:    s.args,
		env:     s.env,
		dir:     o.Dir,
		logFile: r.Log,
		pidFile: o.pidFile(c),
	})
	if err != nil {
		return r, err
	}
	err = waitHealthy(ctx, o, s, func() error {
		select {
		case werr := <-exited:
			return fmt.Errorf("%w (%v)", errExited, werr)
		default:
			return nil
		}
	})
	if err != nil {
		_ = terminate(pid, o.StopTimeout)
		os.Remove(o.pidFile(c))
		tail := logTail(r.Log, 15)
		if p, ok := portTakenInLog(strings.Join(tail, "\n"), s.ports); ok && errors.Is(err, errExited) {
			return r, inUse(p)
		}
		head := fmt.Sprintf("devstack: %s did not come up on %s: %v; last lines of %s:",
			c, s.addr, err, r.Log)
		return r, safetext.LinesError{Text: append([]string{head}, tail...), Err: err}
	}
	r.PID = pid
	return r, s.prepare(ctx)
}

// StartTemporal is Start(ctx, opts, Temporal).
func StartTemporal(ctx context.Context, opts Options) (Running, error) {
	return Start(ctx, opts, Temporal)
}

// StartMinIO is Start(ctx, opts, MinIO).
func StartMinIO(ctx context.Context, opts Options) (Running, error) {
	return Start(ctx, opts, MinIO)
}

// Stop stops one component, SIGTERM and then SIGKILL after StopTimeout, and
// removes its pid file; its state stays. Stopping a stopped one is a no-op.
func Stop(opts Options, c Component) error {
	_, err := stop(opts, c)
	return err
}

// Restart stops and starts one component on the same ports and state, as
// after a crash of that server.
func Restart(ctx context.Context, opts Options, c Component) error {
	if err := Stop(opts, c); err != nil {
		return err
	}
	_, err := Start(ctx, opts, c)
	return err
}

// stop returns the pid it stopped, 0 if nothing was running.
func stop(opts Options, c Component) (int, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	s, err := o.server(c)
	if err != nil {
		return 0, err
	}
	pid := livePID(o.pidFile(c), o.bin(c), s.state)
	if pid == 0 {
		return 0, nil
	}
	if err := terminate(pid, o.StopTimeout); err != nil {
		return pid, fmt.Errorf("devstack: stop %s: %w", c, err)
	}
	os.Remove(o.pidFile(c))
	return pid, nil
}

// errExited: the server process ended while we waited for it.
var errExited = errors.New("it exited while starting")

// waitHealthy probes until the server is healthy, gone reports that its
// process ended, or StartTimeout passes.
func waitHealthy(ctx context.Context, o Options, s server, gone func() error) error {
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		err := s.healthy(pctx)
		pcancel()
		if err == nil {
			return nil
		}
		if gerr := gone(); gerr != nil {
			return gerr
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("not healthy after %s (last probe: %v)", o.StartTimeout, err)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
