package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// Buckets of every stack: bake artifacts and releases, as `whestbake dev up` makes them.
const (
	artifactBucket = "whestbake"
	releaseBucket  = "releases"
	releasePrefix  = "datasets"
)

// stack is one test's servers, workers and scratch space.
type stack struct {
	t       *testing.T
	opts    devstack.Options
	dir     string
	secret  string // the MinIO secret: random, so a leak is unmistakable
	workers int    // started so far, to name their logs
	art     *store.Store
	rel     *store.Store
	tc      client.Client
	// temporal, when set, replaces the temporal section of every config
	// (the production stack's address, TLS files and namespace).
	temporal map[string]any
	// cmdTimeout bounds each run of the whestbake command; 0 is 3 minutes.
	cmdTimeout time.Duration
}

// newStack starts MinIO and the Temporal dev server for t, with credentials
// of its own, and clients for the test's own checks.
func newStack(t *testing.T) *stack {
	t.Helper()
	requireE2E(t)
	o := devtest.Options(t)
	o.AccessKey = "e2e-" + randomHex(4)
	o.SecretKey = "e2e-secret-" + randomHex(16)
	o.Buckets = []string{artifactBucket, releaseBucket}
	o = devtest.StartMinIO(t, o)
	o = devtest.StartTemporal(t, o)
	s := &stack{
		t:      t,
		opts:   o,
		dir:    t.TempDir(),
		secret: o.SecretKey,
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var err error
	if s.art, err = store.Open(ctx, o.S3Config(), artifactBucket); err != nil {
		t.Fatal(err)
	}
	if s.rel, err = s.art.WithBucket(ctx, releaseBucket); err != nil {
		t.Fatal(err)
	}
	s.tc, err = client.Dial(client.Options{
		HostPort:  o.TemporalAddr(),
		Namespace: devstack.Namespace,
		Logger:    tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.tc.Close)
	return s
}

// sub is the stack seen from subtest t: helpers report to (and processes
// end with) t, as the testing package requires.
func (s *stack) sub(t *testing.T) *stack {
	c := *s
	c.t = t
	return &c
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// env is the environment of every child process: the caller's without any
// WHESTBAKE_* (a developer's settings must not leak in), plus the
// credentials, which reach processes only this way.
func (s *stack) env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WHESTBAKE_") {
			out = append(out, kv)
		}
	}
	out = append(out,
		"WHESTBAKE_S3_ACCESS_KEY="+s.opts.AccessKey,
		"WHESTBAKE_S3_SECRET_KEY="+s.secret)
	return append(out, extra...)
}

// baseConfig is what every process needs: where the servers are, and the
// worker's short test timings.
func (s *stack) baseConfig() map[string]any {
	temporal := map[string]any{
		"address":   s.opts.TemporalAddr(),
		"namespace": devstack.Namespace,
		"ui":        s.opts.UIURL(),
	}
	if s.temporal != nil {
		temporal = s.temporal
	}
	s3 := map[string]any{"endpoint": s.opts.S3Config().Endpoint, "bucket": artifactBucket}
	if ca := s.opts.MinIOCAFile; ca != "" {
		s3["ca-file"] = ca
	}
	return map[string]any{
		"temporal": temporal,
		"s3":       s3,
		"worker": map[string]any{
			"device":           "cpu",
			"threads":          1,
			"checkpoint-every": "200ms",
			"stall-timeout":    "1m",
		},
	}
}

// writeConfig writes a YAML config file and returns its path.
func (s *stack) writeConfig(name string, cfg map[string]any) string {
	s.t.Helper()
	data, err := yaml.Marshal(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	p := filepath.Join(s.dir, name+".yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// proc is a child process with its output in a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startWorker runs `whestbake-worker --role role` (and extra flags) and
// waits until it polls.
func (s *stack) startWorker(role string, extra ...string) *proc {
	s.t.Helper()
	return s.startWorkerEnv(role, nil, extra...)
}

// startWorkerEnv is startWorker with extra environment variables.
func (s *stack) startWorkerEnv(role string, env []string, extra ...string) *proc {
	s.t.Helper()
	p := s.spawnWorker(s.writeConfig("worker", s.baseConfig()), role, env, extra...)
	p.waitReady(s.t)
	return p
}

// spawnWorker starts `whestbake-worker --role role --config-file cfg` (with
// extra environment variables and flags) without waiting for it, so that
// many can start at once.
func (s *stack) spawnWorker(cfg, role string, env []string, extra ...string) *proc {
	s.t.Helper()
	s.workers++
	name := fmt.Sprintf("worker-%s-%d", role, s.workers)
	args := []string{"--role", role, "--config-file", cfg, "--device", "cpu", "--threads", "1"}
	return s.spawn(name, env, filepath.Join(binDir, "whestbake-worker"), append(args, extra...)...)
}

// waitReady waits until the worker polls.
func (p *proc) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.output(), "worker ready") {
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready:\n%s", p.name, p.output())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 30s:\n%s", p.name, p.output())
		}
	}
}

// spawn starts bin in the stack's environment plus extraEnv.
func (s *stack) spawn(name string, extraEnv []string, bin string, args ...string) *proc {
	s.t.Helper()
	p := &proc{
		name: name,
		log:  filepath.Join(s.dir, "logs", name+".log"),
		done: make(chan struct{}),
	}
	f, err := os.Create(p.log)
	if err != nil {
		s.t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = s.env(extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a SIGKILL hits the worker alone
	if err := p.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	s.t.Cleanup(p.kill)
	return p
}

func (p *proc) output() string {
	data, _ := os.ReadFile(p.log)
	return string(data)
}

// kill sends SIGKILL, as a host crash would, and reaps the process.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// result is one run of the whestbake command.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// refused reports whether r is a refusal: exit status 1, with every one of
// wants in its stderr.
func (r result) refused(wants ...string) bool {
	if r.code != 1 {
		return false
	}
	for _, want := range wants {
		if !strings.Contains(r.stderr, want) {
			return false
		}
	}
	return true
}

// failed reports whether r is a bake's failure as `watch` or `bake --wait`
// shows it: exit status 1, with every one of wants in its report (stdout).
func (r result) failed(wants ...string) bool {
	if r.code != 1 {
		return false
	}
	for _, want := range wants {
		if !strings.Contains(r.stdout, want) {
			return false
		}
	}
	return true
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s",
		r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// whestbake runs the starter CLI with the stack's environment (plus extra
// variables) and returns what it did; its output is also kept with the logs.
func (s *stack) whestbake(extraEnv []string, args ...string) result {
	s.t.Helper()
	timeout := 3 * time.Minute
	if s.cmdTimeout > 0 {
		timeout = s.cmdTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "whestbake"), args...)
	cmd.Env = s.env(extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		s.t.Fatalf("whestbake %v: %v", args, err)
	}
	s.keepLog("whestbake "+strings.Join(args, " "), r)
	return r
}

// keepLog appends a starter run to logs/starter.log, which the secret test greps.
func (s *stack) keepLog(what string, r result) {
	f, err := os.OpenFile(filepath.Join(s.dir, "logs", "starter.log"),
		os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "$ %s\n%s\n", what, r)
}

// mustWhestbake is whestbake for runs that must succeed.
func (s *stack) mustWhestbake(args ...string) result {
	s.t.Helper()
	r := s.whestbake(nil, args...)
	if r.code != 0 {
		s.t.Fatalf("whestbake %s: %s", strings.Join(args, " "), r)
	}
	return r
}
