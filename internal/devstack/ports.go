package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// PortInUseError says a port the stack needs is held by a program that is
// not this stack's server, and which option moves the stack elsewhere.
type PortInUseError struct {
	Port   int
	Key    string // the flag / config key that sets this port, e.g. "minio-port"
	Holder string // who holds it, where procfs tells: "pid 123: temporal server start-dev …"
}

func (e *PortInUseError) Error() string {
	who := "another program (a dev stack started with another --dir?)"
	if e.Holder != "" {
		who = "another program (" + e.Holder + ")"
	}
	return fmt.Sprintf("devstack: port %d on %s (%s) is in use by %s: "+
		"stop it, choose another port with %s, "+
		"or let `whestbake dev up --move-if-taken` pick a free one",
		e.Port, host, e.Key, who, portKey{e.Port, e.Key}.hint())
}

// inUse is the PortInUseError of p, naming its holder where procfs can.
func inUse(p portKey) *PortInUseError {
	err := &PortInUseError{Port: p.port, Key: p.key}
	if h, found, _ := portHolder(p.port); found {
		err.Holder = h.String()
	}
	return err
}

// portTakenInLog is the port of ports that a server's last start found
// taken, as its log says: "listen tcp 127.0.0.1:PORT: bind: address already
// in use". Another process can bind a port between checkFree and the server.
func portTakenInLog(tail string, ports []portKey) (portKey, bool) {
	if i := strings.LastIndex(tail, logStartMarker); i >= 0 {
		tail = tail[i:] // this start's lines, not an earlier one's
	}
	for _, line := range strings.Split(tail, "\n") {
		if !strings.Contains(line, "address already in use") {
			continue
		}
		for _, p := range ports {
			if strings.Contains(line, fmt.Sprintf(":%d:", p.port)) {
				return p, true
			}
		}
	}
	return portKey{}, false
}

// checkFree binds the port for a moment. A server that fails to bind only
// says so in its log; checking first turns that into a message naming the
// option to change. A port stays busy briefly after its owner was killed,
// as the threads of a dying Go server close its sockets last, so a busy
// port gets a short grace before it counts as taken.
func checkFree(p portKey) error {
	deadline := time.Now().Add(portGrace)
	for {
		l, err := net.Listen("tcp", addr(p.port))
		if err == nil {
			return l.Close()
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("devstack: cannot listen on %s (%s): %w", addr(p.port), p.key, err)
		}
		if time.Now().After(deadline) {
			return inUse(p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const portGrace = time.Second

// FreePorts are n distinct loopback TCP ports nobody listened on a moment
// ago. All n are held open together, so the kernel cannot hand one out twice.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", addr(0))
		if err != nil {
			return nil, fmt.Errorf("devstack: free port: %w", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// StartOnFreePorts is Start for a stack that may run on any free ports: a
// private one whose ports came from FreePorts, where another process may
// grab one before the server binds it, or Up's with MoveIfTaken. On a
// PortInUseError it moves that port to a fresh one and tries again, three
// times. It returns the options the component runs with.
func StartOnFreePorts(ctx context.Context, opts Options, c Component) (Options, error) {
	_, opts, err := startMoving(ctx, opts, c)
	return opts, err
}

// startMoving is StartOnFreePorts, also returning what Start returned.
func startMoving(ctx context.Context, opts Options, c Component) (Running, Options, error) {
	for attempt := 0; ; attempt++ {
		r, err := Start(ctx, opts, c)
		var inUse *PortInUseError
		if !errors.As(err, &inUse) || attempt == 3 {
			return r, opts, err
		}
		fresh, ferr := FreePorts(1)
		if ferr != nil {
			return r, opts, ferr
		}
		ports := []*int{&opts.TemporalPort, &opts.UIPort, &opts.MinIOPort, &opts.MinIOConsolePort}
		for _, p := range ports {
			if *p == inUse.Port {
				*p = fresh[0]
			}
		}
	}
}
