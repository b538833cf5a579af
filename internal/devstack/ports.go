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
	Port int
	Key  string // the flag / config key that sets this port, e.g. "minio-port"
}

func (e *PortInUseError) Error() string {
	return fmt.Sprintf("devstack: port %d on %s (%s) is in use by another program (a dev stack started with another --dir?): stop it, or choose another port with %s",
		e.Port, host, e.Key, portKey{e.Port, e.Key}.hint())
}

// portTakenInLog is the port of ports that a server's last start found
// taken, as its log says ("listen tcp 127.0.0.1:PORT: bind: address already
// in use"): another process can bind a port between checkFree and the server.
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
// option to change. A port stays busy briefly after its owner was killed
// (the threads of a dying Go server close its sockets last), so a busy port
// gets a short grace before it counts as taken.
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
			return &PortInUseError{Port: p.port, Key: p.key}
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

// StartOnFreePorts is Start for a private stack whose ports came from
// FreePorts: another process may grab one of them before the server binds
// it, so on a PortInUseError it moves that port to a fresh one and tries
// again (three times). It returns the options the component runs with.
func StartOnFreePorts(ctx context.Context, opts Options, c Component) (Options, error) {
	for attempt := 0; ; attempt++ {
		_, err := Start(ctx, opts, c)
		var inUse *PortInUseError
		if !errors.As(err, &inUse) || attempt == 3 {
			return opts, err
		}
		fresh, ferr := FreePorts(1)
		if ferr != nil {
			return opts, ferr
		}
		for _, p := range []*int{&opts.TemporalPort, &opts.UIPort, &opts.MinIOPort, &opts.MinIOConsolePort} {
			if *p == inUse.Port {
				*p = fresh[0]
			}
		}
	}
}
