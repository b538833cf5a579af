package pyjudge

import (
	"path/filepath"
	"strings"
	"testing"
)

// whestbench's `whest dataset info` reads a split whestbake baked and
// reports its shape and seed protocol as metadata.json records them.
func TestWhestInfoReadsABake(t *testing.T) {
	env := Need(t)
	dir := filepath.Join(t.TempDir(), "public")
	whestbake(t, "dataset", "bake", "--n-mlps", "2", "--n-samples", "100",
		"--width", "4", "--depth", "2", "--seed", "3", "--split", "public", "--output", dir)
	out := env.WhestOK(t, Cmd{}, "dataset", "info", dir).Stdout
	for _, want := range []string{"split: public", "n_mlps: 2", "n_samples: 100",
		"width: 4", "depth: 2", "(version 3.0)"} {
		if !strings.Contains(out, want) {
			t.Errorf("whest dataset info printed no %q:\n%s", want, out)
		}
	}
}
