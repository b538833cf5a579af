package devtest

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// FaultProxy is a reverse proxy in front of a test's MinIO over plain HTTP
// that injects the faults an S3 service shows in production: slow answers,
// bursts of 503 Slow Down, and an endpoint that stops answering. Clients
// are pointed at Addr instead of MinIO; every request passes through Fault,
// which the test sets and may change at any time.
type FaultProxy struct {
	// Addr is host:port of the proxy, for s3.endpoint.
	Addr string

	mu    sync.Mutex
	fault func(*http.Request) Fault
	// gone is closed when the test ends, releasing held requests.
	gone chan struct{}
}

// Fault is what the proxy does to one request; the zero Fault forwards it.
type Fault struct {
	// Delay holds the request this long before forwarding or failing it.
	Delay time.Duration
	// Status, if not 0, answers with this status and an S3 error body
	// instead of forwarding; 503 is the SlowDown that S3 sends under load.
	Status int
	// Hang holds the request until the client gives up: an S3 endpoint cut
	// off from the worker, which accepts connections and answers nothing.
	Hang bool
	// LoseAnswer forwards the request, then answers Status, 503 if 0, in
	// place of the server's answer: a request the server carried out whose
	// answer never reached the client, which asks again.
	LoseAnswer bool
}

// StartFaultProxy proxies a free loopback port to target, MinIO's
// host:port, until the test ends.
func StartFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{Addr: l.Addr().String(), gone: make(chan struct{})}
	u := &url.URL{Scheme: "http", Host: target}
	forward := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			// Clients sign the Host header they send under SigV4, which
			// names the proxy; MinIO must check the signature against that host.
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1,
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, forward)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		close(p.gone)
		_ = srv.Close()
	})
	return p
}

// SetFault makes f decide the fault of every request from now on; nil is
// none. f runs on the proxy's goroutines, one per request.
func (p *FaultProxy) SetFault(f func(*http.Request) Fault) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request, forward http.Handler) {
	p.mu.Lock()
	decide := p.fault
	p.mu.Unlock()
	var f Fault
	if decide != nil {
		f = decide(r)
	}
	if !p.wait(r, f.Delay) {
		return
	}
	switch {
	case f.LoseAnswer:
		forward.ServeHTTP(httptest.NewRecorder(), r)
		writeS3Error(w, r, cmp.Or(f.Status, http.StatusServiceUnavailable))
	case f.Hang:
		select {
		case <-r.Context().Done():
		case <-p.gone:
		}
	case f.Status != 0:
		writeS3Error(w, r, f.Status)
	default:
		forward.ServeHTTP(w, r)
	}
}

// wait holds r for d; false if its client or the test gave up first.
func (p *FaultProxy) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-p.gone:
	}
	return false
}

// writeS3Error answers as S3 does when it refuses a request: the status
// and an XML error document with the code S3 gives it.
func writeS3Error(w http.ResponseWriter, r *http.Request, status int) {
	code, msg := "InternalError", "We encountered an internal error. Please try again."
	if status == http.StatusServiceUnavailable {
		code, msg = "SlowDown", "Please reduce your request rate."
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Error><Code>%s</Code><Message>%s (injected by the test's fault proxy)</Message>`+
			`<Resource>%s</Resource><RequestId>fault-proxy</RequestId></Error>`,
			code, msg, r.URL.Path)
	}
}
