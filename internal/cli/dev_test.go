package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

func TestDevUpStatusDown(t *testing.T) {
	o := devtest.Options(t)
	const secret = "cli-test-secret-7f3a"
	t.Setenv("WHESTBAKE_S3_SECRET_KEY", secret)
	args := func(verb string) []string {
		return []string{"dev", verb, "--dir", o.Dir, "--bin-dir", o.BinDir,
			"--temporal-port", strconv.Itoa(o.TemporalPort),
			"--ui-port", strconv.Itoa(o.UIPort),
			"--minio-port", strconv.Itoa(o.MinIOPort),
			"--minio-console-port", strconv.Itoa(o.MinIOConsolePort)}
	}
	o.SecretKey = secret
	t.Cleanup(func() { _ = devstack.Down(o, &bytes.Buffer{}) })

	out := mustRun(t, args("up")...)
	for _, want := range []string{
		"temporal started (pid", "minio    started (pid",
		fmt.Sprintf("http://127.0.0.1:%d", o.UIPort),
		fmt.Sprintf("http://127.0.0.1:%d", o.MinIOConsolePort),
		"buckets whestbake, releases",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dev up output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("dev up printed the secret:\n%s", out)
	}
	// The credentials came from the environment, and the buckets exist.
	for _, b := range []string{"whestbake", "releases"} {
		if _, err := store.Open(context.Background(), o.S3Config(), b); err != nil {
			t.Fatal(err)
		}
	}

	out = mustRun(t, args("up")...)
	if strings.Count(out, "already running (pid") != 2 {
		t.Errorf("second dev up should find both servers running:\n%s", out)
	}
	out = mustRun(t, args("status")...)
	if strings.Count(out, "healthy on") != 2 {
		t.Errorf("dev status:\n%s", out)
	}
	out = mustRun(t, args("down")...)
	if strings.Count(out, "stopped (pid") != 2 {
		t.Errorf("dev down:\n%s", out)
	}
	code, out, errs := run(t, args("status")...)
	if code != 1 ||
		strings.Count(out, "not running") != 2 ||
		!strings.Contains(errs, "whestbake dev up") {
		t.Errorf("dev status after down: exit %d\n%s%s", code, out, errs)
	}
}

// The dev stack knows its own servers. Another program holds the ports
// asked for (this test, standing in for another checkout's stack on the
// default ports): `dev up --move-if-taken` starts on free ports and records
// them, and then a plain `dev status`, `dev down` and the starter address
// this stack's servers. A server that is not this stack's is named with its
// pid and address, never called ours.
func TestDevStackKnowsItsServers(t *testing.T) {
	o := devtest.Options(t)
	isolate(t)
	// The config names no server: the record must say where they are.
	t.Setenv("WHESTBAKE_TEMPORAL_ADDRESS", "")
	t.Setenv("WHESTBAKE_S3_ENDPOINT", "")
	t.Chdir(o.Dir)
	dir := filepath.Join(o.Dir, devstack.DefaultOptions().Dir)
	t.Cleanup(func() {
		_ = devstack.Down(devstack.Options{Dir: dir, BinDir: o.BinDir}, &bytes.Buffer{})
	})
	asked := []int{o.TemporalPort, o.UIPort, o.MinIOPort, o.MinIOConsolePort}
	for _, p := range asked {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	me := fmt.Sprintf("pid %d", os.Getpid())
	ports := []string{"--bin-dir", o.BinDir,
		"--temporal-port", strconv.Itoa(o.TemporalPort),
		"--ui-port", strconv.Itoa(o.UIPort),
		"--minio-port", strconv.Itoa(o.MinIOPort),
		"--minio-console-port", strconv.Itoa(o.MinIOConsolePort)}

	code, _, errs := run(t, append([]string{"dev", "up"}, ports...)...)
	taken := fmt.Sprintf("port %d on 127.0.0.1 (minio-port) is in use by another program (%s:",
		o.MinIOPort, me)
	if code != 1 || !strings.Contains(errs, taken) || !strings.Contains(errs, "--move-if-taken") {
		t.Errorf("dev up on taken ports: exit %d\n%s", code, errs)
	}
	out := mustRun(t, append([]string{"dev", "up", "--move-if-taken"}, ports...)...)
	for _, key := range []string{"temporal-port", "ui-port", "minio-port", "minio-console-port"} {
		if !strings.Contains(out, "("+key+") is taken: using ") {
			t.Errorf("dev up did not say where %s moved:\n%s", key, out)
		}
	}
	rec, ok, err := devstack.ReadRecord(dir)
	if !ok || err != nil ||
		slices.Contains(asked, rec.TemporalPort) ||
		slices.Contains(asked, rec.MinIOPort) {
		t.Fatalf("record %+v (%v, %v): want the ports it moved to", rec, ok, err)
	}
	temporal := fmt.Sprintf("127.0.0.1:%d", rec.TemporalPort)
	minio := fmt.Sprintf("127.0.0.1:%d", rec.MinIOPort)

	out = mustRun(t, "dev", "status")
	for _, want := range []string{
		"healthy on " + temporal,
		"healthy on " + minio,
		fmt.Sprintf("Web UI http://127.0.0.1:%d", rec.UIPort),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dev status lacks %q:\n%s", want, out)
		}
	}
	// Asked about the other stack's port, status says whose it is.
	code, out, _ = run(t, "dev", "status", "--temporal-port", strconv.Itoa(o.TemporalPort))
	want := fmt.Sprintf("NOT healthy on 127.0.0.1:%d: 127.0.0.1:%d is held by %s",
		o.TemporalPort, o.TemporalPort, me)
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("dev status on another program's port: exit %d, want %q in\n%s", code, want, out)
	}

	// The starter, with a config that names no server, reaches the recorded
	// stack and links to its Web UI; a missing bake names the server asked.
	cfg := writeFile(t, filepath.Join(o.Dir, "c.yaml"), starterConfigYAML)
	out = mustRun(t, "bake", "--config-file", cfg, "--id", "rec1")
	want = fmt.Sprintf("Web UI: http://127.0.0.1:%d/namespaces/default/workflows/bake%%2Frec1",
		rec.UIPort)
	if !strings.Contains(out, want) {
		t.Errorf("bake output lacks %q:\n%s", want, out)
	}
	code, _, errs = run(t, "status", "nosuch", "--config-file", cfg)
	want = `no bake "nosuch" on the Temporal server at ` + temporal + ", namespace default"
	if code != 1 || !strings.Contains(errs, want) {
		t.Errorf("status of a missing bake: exit %d, want %q in\n%s", code, want, errs)
	}

	out = mustRun(t, "dev", "down")
	if !strings.Contains(out, ", "+temporal+")") || !strings.Contains(out, ", "+minio+")") {
		t.Errorf("dev down did not stop the recorded servers:\n%s", out)
	}
	for _, p := range asked {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Errorf("the other program's port %d: %v", p, err)
			continue
		}
		c.Close()
	}
	// Down, and another program takes the recorded port: not ours either.
	l, err := net.Listen("tcp", temporal)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code, out, _ = run(t, "dev", "status")
	want = "temporal not running from this --dir; " + temporal +
		" is held by another program (" + me
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("dev status after down: exit %d, want %q in\n%s", code, want, out)
	}
}
