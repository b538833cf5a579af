package cli

import (
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
