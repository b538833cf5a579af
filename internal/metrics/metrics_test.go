package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/rows"
)

func TestNilWorkerRecordsNothing(t *testing.T) {
	var w *Worker
	w.Device("cpu", "cpu", "x", "k", 1)
	w.SliceStarted(2)(errors.New("x"))
	w.SliceDone(rows.Computed)
	w.MLPDone(rows.Reused)
	p := w.Engine("cpu", "cpu", 1, 0)
	p.Samples(10)
	p.Checkpointed()
	p.Done()
}

func TestSliceAndEngineMetrics(t *testing.T) {
	w, err := New("gpu", "test")
	if err != nil {
		t.Fatal(err)
	}
	end := w.SliceStarted(1)
	if v := testutil.ToFloat64(w.running); v != 1 {
		t.Errorf("running = %v", v)
	}
	end(temporal.NewApplicationError("stalled", bakeapi.ErrEngineStalled))
	w.SliceStarted(2)(nil)
	if v := testutil.ToFloat64(w.failures.WithLabelValues(bakeapi.ErrEngineStalled)); v != 1 {
		t.Errorf("EngineStalled failures = %v", v)
	}
	if v := testutil.ToFloat64(w.attempts.WithLabelValues("true")); v != 1 {
		t.Errorf("retries = %v", v)
	}
	// A resumed MLP counts only the samples it computes.
	p := w.Engine("cpu", "cpu", 100, 1000)
	if age := w.checkpointAge(); age < 0 || age > 5 {
		t.Errorf("checkpoint age at start = %v", age)
	}
	time.Sleep(10 * time.Millisecond)
	p.Samples(1500)
	p.Samples(1500) // no progress: no change
	if v := testutil.ToFloat64(w.samples.WithLabelValues("cpu", "cpu")); v != 500 {
		t.Errorf("samples = %v, want 500", v)
	}
	if v := testutil.ToFloat64(w.flops.WithLabelValues("cpu", "cpu")); v != 50000 {
		t.Errorf("flops = %v, want 50000", v)
	}
	if v := testutil.ToFloat64(w.samplesRate.WithLabelValues("cpu", "cpu")); v <= 0 ||
		v > 500/0.01 {
		t.Errorf("rate = %v", v)
	}
	p.Checkpointed()
	p.Done()
	if w.checkpointAge() != 0 ||
		testutil.ToFloat64(w.samplesRate.WithLabelValues("cpu", "cpu")) != 0 {
		t.Errorf(
			"after Done: age %v, rate %v",
			w.checkpointAge(),
			testutil.ToFloat64(w.samplesRate.WithLabelValues("cpu", "cpu")),
		)
	}
}

func TestErrorType(t *testing.T) {
	invalidSeeds := temporal.NewNonRetryableApplicationError("x", bakeapi.ErrInvalidSeeds, nil)
	for err, want := range map[error]string{
		invalidSeeds:                bakeapi.ErrInvalidSeeds,
		temporal.NewCanceledError(): "Canceled",
		errors.New("boom"):          "Other",
	} {
		if got := ErrorType(err); got != want {
			t.Errorf("ErrorType(%v) = %s, want %s", err, got, want)
		}
	}
}

func TestServe(t *testing.T) {
	w, err := New("control", "test")
	if err != nil {
		t.Fatal(err)
	}
	h := &Health{}
	s, err := Serve("127.0.0.1:0", w, h)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if c, _ := get("/healthz"); c != 200 {
		t.Errorf("/healthz while starting: %d", c)
	}
	if c, _ := get("/readyz"); c != 503 {
		t.Errorf("/readyz while starting: %d", c)
	}
	h.Set(Running, func(context.Context) error { return nil })
	if c, _ := get("/readyz"); c != 200 {
		t.Errorf("/readyz while running: %d", c)
	}
	h.Set(Running, func(context.Context) error { return errors.New("frontend down") })
	if c, b := get("/readyz"); c != 503 || !strings.Contains(b, "frontend down") {
		t.Errorf("/readyz without a frontend: %d %s", c, b)
	}
	if c, _ := get("/healthz"); c != 200 {
		t.Errorf("/healthz without a frontend: %d (liveness must not depend on Temporal)", c)
	}
	h.Set(Stopping, nil)
	if c, _ := get("/healthz"); c != 503 {
		t.Errorf("/healthz while stopping: %d", c)
	}
	if c, b := get("/metrics"); c != 200 ||
		!strings.Contains(b, `whestbake_worker_info{role="control",version="test"} 1`) {
		t.Errorf("/metrics: %d\n%s", c, b)
	}
	if _, err := Serve(s.Addr(), w, h); err == nil ||
		!strings.Contains(err.Error(), "worker.metrics-listen") {
		t.Errorf("a taken port: %v", err)
	}
}

// `:9464`, the short form, binds every interface: the worker's log says
// so, and which address keeps the endpoints on this host.
func TestBindingSaysWhoCanReachTheEndpoints(t *testing.T) {
	for addr, want := range map[string]string{
		":9464": "every interface: " +
			"reachable from other hosts (127.0.0.1:9464 is this host only)",
		"[::]:9464":      "every interface",
		"0.0.0.0:1":      "every interface",
		"127.0.0.1:9464": "loopback: this host only",
		"[::1]:9464":     "loopback: this host only",
		"localhost:9464": "loopback: this host only",
		"10.1.2.3:9464":  "the interface of 10.1.2.3 only",
	} {
		if got := Binding(addr); !strings.HasPrefix(got, want) {
			t.Errorf("Binding(%q) = %q, want %q", addr, got, want)
		}
	}
	w, err := New("control", "test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Serve(":0", w, &Health{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := Binding(s.Addr()); !strings.HasPrefix(got, "every interface") {
		t.Errorf("a server on :0 listens at %s, described as %q", s.Addr(), got)
	}
}
