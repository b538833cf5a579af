package devstack_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// TestLifecycle drives the real servers through what a developer and the
// e2e tests do: up, up again, lose a server to SIGKILL, restart one, down.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	opts := devtest.Options(t)
	opts.Buckets = []string{devstack.ArtifactsBucket, devstack.ReleasesBucket}
	ctx := context.Background()
	t.Cleanup(func() { _ = devstack.Down(opts, &bytes.Buffer{}) })

	var out bytes.Buffer
	if _, err := devstack.Up(ctx, opts, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "started (pid"); n != 2 {
		t.Fatalf("first Up should start both servers:\n%s", out.String())
	}
	tc := dialTemporal(t, opts)
	// A workflow with no worker stays open; it must survive a server crash.
	run, err := tc.ExecuteWorkflow(ctx,
		client.StartWorkflowOptions{ID: "persist-me", TaskQueue: "nobody-polls"}, "NoSuchWorkflow")
	if err != nil {
		t.Fatal(err)
	}
	// A state directory from before an attribute existed lacks it; Up must add it.
	removal := &operatorservice.RemoveSearchAttributesRequest{
		Namespace:        devstack.Namespace,
		SearchAttributes: []string{"BakeStage"},
	}
	_, err = tc.OperatorService().RemoveSearchAttributes(ctx, removal)
	if err != nil {
		t.Fatal(err)
	}
	tc.Close()
	s, err := store.Open(ctx, opts.S3Config(), devstack.ReleasesBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutCreate(ctx, "k", []byte("kept")); err != nil {
		t.Fatal(err)
	}

	out.Reset()
	if _, err := devstack.Up(ctx, opts, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "already running (pid"); n != 2 {
		t.Fatalf("second Up should find both servers running:\n%s", out.String())
	}

	moved := opts
	moved.MinIOConsolePort = devtest.FreePorts(t, 1)[0]
	_, err = devstack.Start(ctx, moved, devstack.MinIO)
	if err == nil || !strings.Contains(err.Error(), "running with other options") {
		t.Fatalf("Start with another port while running: got %v, "+
			"want a 'dev down first' error", err)
	}

	// A crash: SIGKILL leaves a stale pid file; Start must replace the
	// server, and the workflow database must still hold the run.
	killFromPIDFile(t, opts, devstack.Temporal)
	r, err := devstack.StartTemporal(ctx, opts)
	if err != nil || r.AlreadyRunning {
		t.Fatalf("StartTemporal after a crash = %+v, %v", r, err)
	}
	tc = dialTemporal(t, opts)
	defer tc.Close()
	if _, err := tc.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID()); err != nil {
		t.Fatalf("workflow lost across a server crash: %v", err)
	}
	attrs, err := tc.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: devstack.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	for _, sa := range devstack.SearchAttributes {
		if _, ok := attrs.GetCustomAttributes()[sa.Name]; !ok {
			t.Errorf("search attribute %s not registered", sa.Name)
		}
	}

	if err := devstack.Restart(ctx, opts, devstack.MinIO); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "k"); err != nil || string(got) != "kept" {
		t.Fatalf("object after a MinIO restart = %q, %v", got, err)
	}

	// A write issued while MinIO is down completes once it is back: the
	// store's client retries, which is what carries a bake over a restart.
	if err := devstack.Stop(opts, devstack.MinIO); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := devstack.StartMinIO(ctx, opts)
		restarted <- err
	}()
	if err := s.Put(ctx, "during-restart", []byte("ok")); err != nil {
		t.Fatalf("Put across a MinIO restart: %v", err)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}

	states, err := devstack.Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.PID == 0 || !st.Healthy {
			t.Errorf("Status: %+v, want running and healthy", st)
		}
	}

	// A copy of the state directory holds the pid files of this stack's
	// servers, but it did not start them: its down stops neither.
	copied := opts
	copied.Dir = copyState(t, opts.Dir)
	out.Reset()
	if err := devstack.Down(copied, &out); err != nil ||
		strings.Count(out.String(), "not running from "+copied.Dir) != 2 {
		t.Fatalf("Down of a copy of the state directory = %v:\n%s", err, out.String())
	}
	states, err = devstack.Status(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.PID == 0 || !st.Healthy {
			t.Errorf("Status after Down of a copy: %+v, want running and healthy", st)
		}
	}

	out.Reset()
	if err := devstack.Down(opts, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "stopped (pid"); n != 2 {
		t.Fatalf("Down should stop both servers:\n%s", out.String())
	}
	states, _ = devstack.Status(ctx, opts)
	for _, st := range states {
		if st.PID != 0 {
			t.Errorf("Status after Down: %+v", st)
		}
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "run", "minio.pid")); !os.IsNotExist(err) {
		t.Error("Down left the pid file")
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "temporal.db")); err != nil {
		t.Errorf("Down must keep state: %v", err)
	}
	out.Reset()
	err = devstack.Down(opts, &out)
	if err != nil || strings.Count(out.String(), "not running") != 2 {
		t.Fatalf("second Down = %v:\n%s", err, out.String())
	}
}

func TestPortInUse(t *testing.T) {
	t.Parallel() // waits out the grace a just-killed server gets
	opts := fakeOptions(t, "exit 0")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	opts.MinIOConsolePort = l.Addr().(*net.TCPAddr).Port
	_, err = devstack.Start(context.Background(), opts, devstack.MinIO)
	var inUse *devstack.PortInUseError
	if !errors.As(err, &inUse) ||
		inUse.Key != "minio-console-port" ||
		inUse.Port != opts.MinIOConsolePort {
		t.Fatalf("got %v, want PortInUseError for minio-console-port", err)
	}
	// The dev ports are flags only: no config key, no environment variable.
	for _, want := range []string{strconv.Itoa(opts.MinIOConsolePort), "--minio-console-port"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// A port another process binds after the check but before the server does
// is reported as in use, so StartOnFreePorts moves it instead of failing.
func TestPortTakenWhileStarting(t *testing.T) {
	opts := fakeOptions(t, "")
	script := fmt.Sprintf("#!/bin/sh\n"+
		"echo 'listen tcp 127.0.0.1:%d: bind: address already in use'; exit 1\n", opts.MinIOPort)
	if err := os.WriteFile(filepath.Join(opts.BinDir, "minio"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := devstack.Start(context.Background(), opts, devstack.MinIO)
	var inUse *devstack.PortInUseError
	if !errors.As(err, &inUse) || inUse.Key != "minio-port" || inUse.Port != opts.MinIOPort {
		t.Fatalf("got %v, want PortInUseError for minio-port", err)
	}
}

func TestStartFailureShowsLog(t *testing.T) {
	opts := fakeOptions(t, `echo "FATAL: cannot open drive"; exit 3`)
	_, err := devstack.Start(context.Background(), opts, devstack.MinIO)
	if err == nil ||
		!strings.Contains(err.Error(), "exited while starting") ||
		!strings.Contains(err.Error(), "FATAL: cannot open drive") {
		t.Fatalf("got %v, want an exit error quoting the log", err)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "run", "minio.pid")); !os.IsNotExist(err) {
		t.Error("a failed start left its pid file")
	}
}

func TestNeverHealthy(t *testing.T) {
	opts := fakeOptions(t, "exec sleep 60")
	opts.StartTimeout = 300 * time.Millisecond
	_, err := devstack.Start(context.Background(), opts, devstack.MinIO)
	if err == nil || !strings.Contains(err.Error(), "not healthy after") {
		t.Fatalf("got %v, want a health timeout", err)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "run", "minio.pid")); !os.IsNotExist(err) {
		t.Error("a failed start left its pid file")
	}
}

// A pid file naming a process that is not our server (here: the test
// itself) must be treated as stale, never signalled.
func TestStalePIDFileIsNotKilled(t *testing.T) {
	opts := fakeOptions(t, "exit 0")
	pidFile := filepath.Join(opts.Dir, "run", "minio.pid")
	if err := os.MkdirAll(filepath.Dir(pidFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := devstack.Stop(opts, devstack.MinIO); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Error("stale pid file kept")
	}
}

func TestOptionErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func(*devstack.Options)
		want []string
	}{
		{"same port twice", func(o *devstack.Options) { o.UIPort = o.TemporalPort },
			[]string{"temporal-port and ui-port"}},
		{"port out of range", func(o *devstack.Options) { o.MinIOPort = 70000 },
			[]string{"minio-port 70000", "fix --minio-port"}},
		{"short secret", func(o *devstack.Options) { o.SecretKey = "short" },
			[]string{"WHESTBAKE_S3_SECRET_KEY"}},
		{"missing binary", func(o *devstack.Options) { o.BinDir = t.TempDir() },
			[]string{"make tools"}},
		{"unknown component", nil, []string{`unknown component "redis"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := fakeOptions(t, "exit 0")
			comp := devstack.MinIO
			if c.edit != nil {
				c.edit(&opts)
			} else {
				comp = "redis"
			}
			_, err := devstack.Start(ctx, opts, comp)
			for _, want := range c.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v, want it to mention %q", err, want)
				}
			}
		})
	}
}

// copyState copies what names a stack's servers in state directory dir,
// its record and pid files, into a new directory, as `cp -r` would.
func copyState(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(filepath.Join(dst, "run"), os.DirFS(filepath.Join(dir, "run"))); err != nil {
		t.Fatal(err)
	}
	record, err := os.ReadFile(filepath.Join(dir, "stack.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "stack.json"), record, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// fakeOptions point at a bin dir whose "minio" is a shell script, for the
// paths that need a process but not a real server.
func fakeOptions(t *testing.T, script string) devstack.Options {
	t.Helper()
	bin := t.TempDir()
	fake := []byte("#!/bin/sh\n" + script + "\n")
	if err := os.WriteFile(filepath.Join(bin, "minio"), fake, 0o755); err != nil {
		t.Fatal(err)
	}
	ports := devtest.FreePorts(t, 4)
	return devstack.Options{
		Dir:              t.TempDir(),
		BinDir:           bin,
		TemporalPort:     ports[0],
		UIPort:           ports[1],
		MinIOPort:        ports[2],
		MinIOConsolePort: ports[3],
		StopTimeout:      time.Second,
	}
}

func dialTemporal(t *testing.T, opts devstack.Options) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  opts.TemporalAddr(),
		Namespace: devstack.Namespace,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func killFromPIDFile(t *testing.T, opts devstack.Options, c devstack.Component) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(opts.Dir, "run", string(c)+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

func TestOptionsHideSecret(t *testing.T) {
	o := devstack.DefaultOptions()
	o.SecretKey = "options-secret-123"
	st := devstack.Stack{Options: o}
	for _, s := range []string{
		fmt.Sprint(o),
		fmt.Sprintf("%+v", o),
		fmt.Sprintf("%#v", o),
		fmt.Sprintf("%+v", st),
	} {
		if strings.Contains(s, o.SecretKey) {
			t.Errorf("secret printed: %s", s)
		}
	}
}
