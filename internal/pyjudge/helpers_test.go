package pyjudge

import (
	"bytes"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/cli"
)

// whestbake runs the whestbake CLI in this process and returns what it
// printed, failing the test unless it exits 0.
func whestbake(t testing.TB, args ...string) string {
	t.Helper()
	out, errs, code := whestbakeRun(args...)
	if code != 0 {
		t.Fatalf("whestbake %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// whestbakeRun runs the whestbake CLI in this process however it ends.
func whestbakeRun(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Execute(args, &out, &errb)
	return out.String(), errb.String(), code
}
