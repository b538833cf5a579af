package activities_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// throttle is a reverse proxy in front of MinIO that sends the bodies of
// downloads of dataset files (keys with a "data/" folder) at rate bytes a
// second, or holds them (rate 0): a slow or stalled S3 for the copies of
// Push, which count progress by the bytes they read.
type throttle struct {
	addr string
	rate atomic.Int64
}

func startThrottle(t *testing.T, target string) *throttle {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	th := &throttle{addr: l.Addr().String()}
	u := &url.URL{Scheme: "http", Host: target}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host // clients sign the Host they send (SigV4)
		},
		FlushInterval: -1, // every write reaches the client at once
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/data/") {
			w = &slowWriter{ResponseWriter: w, throttle: th, ctx: r.Context()}
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return th
}

// slowWriter passes a response body on at the throttle's rate, in small
// chunks; at rate 0 it passes nothing until the request ends.
type slowWriter struct {
	http.ResponseWriter
	throttle *throttle
	ctx      context.Context
}

func (w *slowWriter) Write(p []byte) (int, error) {
	const chunk = 16 << 10
	done := 0
	for done < len(p) {
		for w.throttle.rate.Load() == 0 {
			select {
			case <-w.ctx.Done():
				return done, w.ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		n, err := w.ResponseWriter.Write(p[done:min(len(p), done+chunk)])
		done += n
		if err != nil {
			return done, err
		}
		http.NewResponseController(w.ResponseWriter).Flush()
		rate := float64(w.throttle.rate.Load())
		time.Sleep(time.Duration(float64(n) / rate * float64(time.Second)))
	}
	return done, nil
}

func (w *slowWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// storeVia is the fixture's store reached through the proxy at addr.
func (f *fixture) storeVia(t *testing.T, addr string) *store.Store {
	t.Helper()
	cfg := f.cfg
	cfg.Endpoint = addr
	st, err := store.Open(context.Background(), cfg, f.bucket)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// bigDataset commits a dataset of one file of size random bytes, as a split
// of that size would be one parquet file.
func bigDataset(t *testing.T, f *fixture, prefix string, size int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, size)
	_, _ = rand.Read(data)
	if err := os.WriteFile(
		filepath.Join(dir, "data", "public-00000-of-00001.parquet"),
		data,
		0o644,
	); err != nil {
		t.Fatal(err)
	}
	if _, _, err := activities.CommitDir(
		context.Background(),
		f.st,
		dir,
		prefix,
		seal.Seal{},
	); err != nil {
		t.Fatal(err)
	}
}

// pushOnce is Push as BakeWorkflow runs it, with one attempt and the given
// heartbeat timeout.
func pushOnce(
	ctx workflow.Context,
	in bakeapi.PushInput,
	heartbeat time.Duration,
) (bakeapi.PushOutput, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var out bakeapi.PushOutput
	err := workflow.ExecuteActivity(ctx, bakeapi.PushActivity, in).Get(ctx, &out)
	return out, err
}

// newWorkflowEnv is a quiet test workflow environment that waits as long
// as a throttled copy takes.
func newWorkflowEnv() *testsuite.TestWorkflowEnvironment {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := ts.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	return env
}

// pushReturn is what the Push activity function itself returned, and when.
type pushReturn struct {
	err        error
	returnedAt time.Time
}

// runPush runs pushOnce in a test workflow environment, which times
// activities out by their heartbeats in real time as the server does. It
// returns the copy heartbeats seen, a channel that receives the activity
// function's own return, and the workflow's error.
func runPush(
	t *testing.T,
	a *activities.Activities,
	in bakeapi.PushInput,
	heartbeat time.Duration,
) ([]activities.CopyProgress, <-chan pushReturn, error) {
	t.Helper()
	env := newWorkflowEnv()
	env.RegisterWorkflow(pushOnce)
	returned := make(chan pushReturn, 1)
	env.RegisterActivityWithOptions(
		func(ctx context.Context, in bakeapi.PushInput) (bakeapi.PushOutput, error) {
			out, err := a.Push(ctx, in)
			returned <- pushReturn{err, time.Now()}
			return out, err
		},
		activity.RegisterOptions{Name: bakeapi.PushActivity},
	)
	var mu sync.Mutex
	var beats []activities.CopyProgress
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var p activities.CopyProgress
		if details.Get(&p) == nil && p.Size > 0 {
			mu.Lock()
			beats = append(beats, p)
			mu.Unlock()
		}
	})
	env.ExecuteWorkflow(pushOnce, in, heartbeat)
	mu.Lock()
	defer mu.Unlock()
	return beats, returned, env.GetWorkflowError()
}

// testPushHeartbeatsALongCopy: a release file that takes several heartbeat
// timeouts to copy (a split is one parquet file: 962 MiB took 9 s against a
// 3 s heartbeat) is copied in one attempt, heartbeating its progress while
// it streams.
func testPushHeartbeatsALongCopy(t *testing.T, f *fixture) {
	const size, rate, heartbeat = 2 << 20, 1 << 20, 400 * time.Millisecond // 2 s of copying
	prefix := keys.Bake("long-copy").Dataset()
	bigDataset(t, f, prefix, size)
	th := startThrottle(t, f.cfg.Endpoint)
	th.rate.Store(rate)
	a := f.acts(gpuengine.CPU{})
	a.Store = f.storeVia(t, th.addr)
	in := releaseInput(f, prefix, "long", "v1")
	start := time.Now()
	beats, _, err := runPush(t, a, in, heartbeat)
	if err != nil {
		t.Fatalf(
			"push of a %d-byte file at %d bytes/s with a %s heartbeat timeout: %v",
			size,
			rate,
			heartbeat,
			err,
		)
	}
	if took := time.Since(start); took < 2*heartbeat {
		t.Fatalf(
			"the copy took %s, under two heartbeat timeouts: the throttle did not hold it",
			took,
		)
	}
	var mid int
	for i, b := range beats {
		if b.Copied > 0 && b.Copied < size {
			mid++
		}
		if i > 0 && b.Copied < beats[i-1].Copied {
			t.Errorf("heartbeats went back from %d to %d bytes", beats[i-1].Copied, b.Copied)
		}
	}
	if mid < 2 {
		t.Errorf("%d heartbeats inside the file (%+v), want several while it streams", mid, beats)
	}
	rel := keys.Release("datasets", "long", "v1")
	if ok, err := f.st.Exists(context.Background(), keys.Manifest(rel)); err != nil || !ok {
		t.Errorf("the release was not committed (%v)", err)
	}
}

// testPushStopsAStalledCopy: a copy that stops moving (S3 holds the download)
// makes the attempt time out, and the attempt itself stops within about a
// heartbeat timeout instead of copying on beside its retry; it leaves no
// release file behind.
func testPushStopsAStalledCopy(t *testing.T, f *fixture) {
	const size, heartbeat = 1 << 20, 400 * time.Millisecond
	prefix := keys.Bake("stalled-copy").Dataset()
	bigDataset(t, f, prefix, size)
	th := startThrottle(t, f.cfg.Endpoint)
	a := f.acts(gpuengine.CPU{})
	a.Store = f.storeVia(t, th.addr) // rate 0: uploads are held
	in := releaseInput(f, prefix, "stalled", "v1")
	start := time.Now()
	_, returned, err := runPush(t, a, in, heartbeat)
	if err == nil {
		t.Fatal("a push whose upload never moved succeeded")
	}
	select {
	case r := <-returned:
		if took := r.returnedAt.Sub(start); took > 5*heartbeat {
			t.Errorf(
				"the stalled attempt ran %s, want it stopped within about a heartbeat timeout (%s)",
				took,
				heartbeat,
			)
		}
		if r.err == nil || !strings.Contains(r.err.Error(), "stopped moving") {
			t.Errorf(
				"the stalled attempt returned %v, want it to say the copy stopped moving",
				r.err,
			)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the timed-out attempt is still copying 10 s later")
	}
	rel := keys.Release("datasets", "stalled", "v1")
	for _, key := range []string{
		keys.Manifest(rel),
		path.Join(rel, "data/public-00000-of-00001.parquet"),
	} {
		if ok, err := f.st.Exists(context.Background(), key); ok || err != nil {
			t.Errorf("the stopped push left %s (exists %v, %v)", key, ok, err)
		}
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("the workflow saw a cancellation, want the attempt's failure: %v", err)
	}
}
