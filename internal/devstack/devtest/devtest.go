// Package devtest runs private dev-stack servers for tests: real MinIO and
// a real Temporal dev server from bin/, which `make tools` builds, on free
// loopback ports with state in a temporary directory, stopped when the test
// ends.
package devtest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/tlsconf/tlstest"
)

// Options are devstack options for a stack private to t: a temp Dir, free
// ports and the repository's bin/. The test is skipped under -short, and
// when the server binaries have not been built, as for `go test ./...` on
// a fresh clone; with E2E_REQUIRED=1, as `make test` sets it, it fails
// instead, so CI can never pass by skipping the real servers.
func Options(t testing.TB) devstack.Options {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: needs real MinIO/Temporal servers (not run under -short)")
	}
	bin := binDir(t)
	for _, c := range devstack.Components {
		path := filepath.Join(bin, string(c))
		if _, err := os.Stat(path); err != nil {
			msg := fmt.Sprintf("%s is missing: "+
				"run `make tools` to build the pinned MinIO and Temporal CLI", path)
			if os.Getenv("E2E_REQUIRED") == "1" {
				t.Fatal(msg + " (E2E_REQUIRED=1)")
			}
			t.Skip("skipping: " + msg)
		}
	}
	o := devstack.DefaultOptions()
	// Not t.TempDir(): subtest names can put '#' in it, which the Temporal dev
	// server reads as the start of a URI fragment in --db-filename.
	dir, err := os.MkdirTemp("", "whestbake-devtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	o.Dir = dir
	o.BinDir = bin
	ports := FreePorts(t, 4)
	o.TemporalPort = ports[0]
	o.UIPort = ports[1]
	o.MinIOPort = ports[2]
	o.MinIOConsolePort = ports[3]
	return o
}

// StartMinIO starts MinIO for opts, made by Options, and stops it when the
// test ends.
func StartMinIO(t testing.TB, opts devstack.Options) devstack.Options {
	t.Helper()
	return start(t, opts, devstack.MinIO)
}

// Bucket is the bucket StartStore creates.
const Bucket = "test"

// StartStore runs a MinIO private to t, stopped when the test ends, and
// returns how to reach it and the name of an existing, empty bucket. It is
// here, with the servers it starts, rather than beside internal/store, so that
// no helper of the store reaches up into the dev stack.
func StartStore(t testing.TB) (store.Config, string) {
	t.Helper()
	o := Options(t)
	o.Buckets = []string{Bucket}
	o = StartMinIO(t, o)
	return o.S3Config(), Bucket
}

// WithMinIOTLS makes opts serve MinIO over TLS with a certificate for
// 127.0.0.1 from a CA of its own; S3Config then trusts that CA.
func WithMinIOTLS(t testing.TB, opts devstack.Options) devstack.Options {
	t.Helper()
	dir := filepath.Join(opts.Dir, "minio-certs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca := tlstest.NewCA(t, dir, "minio")
	leaf := ca.Issue(t, "minio", tlstest.LeafOptions{
		Server: true,
		Hosts:  []string{"127.0.0.1", "localhost"},
	})
	names := map[string]string{leaf.CertFile: "public.crt", leaf.KeyFile: "private.key"}
	for from, to := range names {
		if err := os.Rename(from, filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	opts.MinIOCertsDir = dir
	opts.MinIOCAFile = ca.CAFile
	return opts
}

// StartTemporal starts the Temporal dev server for opts, made by Options,
// and stops it when the test ends.
func StartTemporal(t testing.TB, opts devstack.Options) devstack.Options {
	t.Helper()
	return start(t, opts, devstack.Temporal)
}

// Client is a client of the Temporal server StartTemporal started for opts,
// in the dev namespace, whose SDK logs go nowhere; closed when the test ends.
func Client(t testing.TB, opts devstack.Options) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  opts.TemporalAddr(),
		Namespace: devstack.Namespace,
		Logger:    tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// start starts c, on fresh ports when another test process grabbed one of
// ours between FreePorts and the server binding it.
func start(t testing.TB, opts devstack.Options, c devstack.Component) devstack.Options {
	t.Helper()
	opts, err := devstack.StartOnFreePorts(context.Background(), opts, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := devstack.Stop(opts, c); err != nil {
			t.Error(err)
		}
	})
	return opts
}

// FreePorts is devstack.FreePorts for a test.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := devstack.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// binDir is <module root>/bin, found from the test's working directory,
// its package directory.
func binDir(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory: cannot find bin/")
		}
		dir = parent
	}
}

// LogBuffer is a log sink that a worker goroutine writes while the test reads it.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
