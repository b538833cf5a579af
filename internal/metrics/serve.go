package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is what the health endpoints report. The zero value is "starting".
type Health struct {
	mu    sync.Mutex
	state string
	// ready, when set, checks the worker's dependencies for /readyz: that
	// the Temporal frontend answers.
	ready func(context.Context) error
}

// Health states.
const (
	Starting = "starting"
	Running  = "running"
	Stopping = "stopping"
)

// Set moves to state; ready, which may be nil, is the readiness check from now on.
func (h *Health) Set(state string, ready func(context.Context) error) {
	h.mu.Lock()
	h.state = state
	h.ready = ready
	h.mu.Unlock()
}

func (h *Health) get() (string, func(context.Context) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == "" {
		return Starting, nil
	}
	return h.state, h.ready
}

// Server serves /metrics, /healthz and /readyz.
type Server struct {
	srv  *http.Server
	addr string
	done chan error
}

// Addr is where the server listens, useful when the port was 0.
func (s *Server) Addr() string { return s.addr }

// Binding says in words who can reach a listener at addr, a host:port: a
// host left empty, 0.0.0.0 or :: is every interface, so the endpoints are
// open to other hosts, which a remote Prometheus needs and a shared
// machine may not want; the log and the docs say which it is.
func Binding(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "unknown interfaces (" + addr + ")"
	}
	ip, ipErr := netip.ParseAddr(host)
	switch {
	case host == "" || ipErr == nil && ip.IsUnspecified():
		local := net.JoinHostPort("127.0.0.1", port)
		return "every interface: reachable from other hosts (" + local + " is this host only)"
	case host == "localhost" || ipErr == nil && ip.Unmap().IsLoopback():
		return "loopback: this host only"
	}
	return "the interface of " + host + " only"
}

// Serve listens on addr at once, so that a taken port fails the worker
// before it connects anywhere, and serves until Close.
//
//	/metrics  Prometheus exposition of w's registry
//	/healthz  liveness: 200 while the process starts or runs its workers,
//	          503 once it stops; a Temporal outage does not fail it, since
//	          the workers reconnect by themselves and a restart would not help
//	/readyz   readiness: 200 when the workers run and the frontend answers
//
// listenFix is the advice for a metrics address the worker cannot listen on.
const listenFix = "choose a free host:port " +
	"(127.0.0.1:9464 for this host only, :9464 for every interface), " +
	"or leave it empty to serve no metrics"

func Serve(addr string, w *Worker, h *Health) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("worker.metrics-listen %s: %v: "+listenFix, addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(w.reg, promhttp.HandlerOpts{Registry: w.reg}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		state, _ := h.get()
		if state == Stopping {
			http.Error(rw, state, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, state)
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, r *http.Request) {
		state, ready := h.get()
		if state != Running {
			http.Error(rw, state, http.StatusServiceUnavailable)
			return
		}
		if ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
			defer cancel()
			if err := ready(ctx); err != nil {
				http.Error(rw, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(rw, "ready")
	})
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		addr: l.Addr().String(),
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
