package cli

import (
	"bytes"
	"context"
	"fmt"
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
			"--temporal-port", strconv.Itoa(o.TemporalPort), "--ui-port", strconv.Itoa(o.UIPort),
			"--minio-port", strconv.Itoa(o.MinIOPort), "--minio-console-port", strconv.Itoa(o.MinIOConsolePort)}
	}
	o.SecretKey = secret
	t.Cleanup(func() { _ = devstack.Down(o, &bytes.Buffer{}) })

	out := mustRun(t, args("up")...)
	for _, want := range []string{
		"temporal started (pid", "minio    started (pid",
		fmt.Sprintf("http://127.0.0.1:%d", o.UIPort), fmt.Sprintf("http://127.0.0.1:%d", o.MinIOConsolePort),
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
	if code != 1 || strings.Count(out, "not running") != 2 || !strings.Contains(errs, "whestbake dev up") {
		t.Errorf("dev status after down: exit %d\n%s%s", code, out, errs)
	}
}
