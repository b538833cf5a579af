package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Without the CUDA engine, `bench --phases` still prints the CPU table and says in the
// phase table why it has no rows, instead of failing the whole bench: the acceptance
// run's dry run on a machine without a GPU goes on past it.
func TestBenchPhasesWithoutCUDASaysWhy(t *testing.T) {
	out := mustRun(t, "bench", "--configs", "8x2", "--n-samples", "4096", "--threads", "1",
		"--no-peer", "--phases")
	if !strings.Contains(out, "whestbake philox (CPU twin)") {
		t.Errorf("no CPU row:\n%s", out)
	}
	const why = "| 8x2 | error | --phases: this whestbake binary was built without CUDA support"
	if !strings.Contains(out, why) {
		t.Errorf("the phase table does not say why it is empty:\n%s", out)
	}
}

// A peer whose interpreter is missing stops the bench before it measures
// anything, saying what installs it: the judge for the numpy peer, the
// judge with PyTorch for the torch peer, which runs both.
func TestBenchWithoutThePeersInterpreterSaysWhatInstallsIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "bin", "python")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--python", missing}, "make pyjudge installs the Python judge"},
		{[]string{"--no-peer", "--torch-peer", "--python", missing},
			"make pyjudge-torch installs the judge with PyTorch"},
	} {
		args := append([]string{"bench", "--configs", "8x2", "--n-samples", "4096"}, c.args...)
		code, out, errs := run(t, args...)
		if code == 0 || !strings.Contains(errs, missing) || !strings.Contains(errs, c.want) {
			t.Errorf("whestbake %s: exit %d, stderr %q; want a failure naming %s and %q",
				strings.Join(args, " "), code, errs, missing, c.want)
		}
		if strings.Contains(out, "whestbake philox") {
			t.Errorf("whestbake %s measured before failing:\n%s", strings.Join(args, " "), out)
		}
	}
}
