// Package datasettest holds checks on dataset directories shared by tests of
// several packages.
package datasettest

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// SameParquet fails unless got and want hold the same parquet files with the
// same bytes. metadata.json and README.md are not compared: they record when
// and on which host the bake ran.
func SameParquet(t testing.TB, got, want string) {
	t.Helper()
	list := func(dir string) []string {
		names, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range names {
			names[i] = filepath.Base(n)
		}
		return names
	}
	g, w := list(got), list(want)
	if !slices.Equal(g, w) || len(w) == 0 {
		t.Fatalf("parquet files %v, the local bake has %v", g, w)
	}
	for _, n := range w {
		a, err1 := os.ReadFile(filepath.Join(got, "data", n))
		b, err2 := os.ReadFile(filepath.Join(want, "data", n))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("data/%s differs from the local bake (%d vs %d bytes)", n, len(a), len(b))
		}
	}
}

// SameRow reports whether two rows are equal bit for bit: floats are compared
// by their bits, so a NaN equals itself and -0 differs from +0.
func SameRow(a, b dataset.Row) bool {
	bits32 := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	return a.MLPID == b.MLPID && a.Name == b.Name && a.Seed == b.Seed && a.Breakdown == b.Breakdown &&
		math.Float64bits(a.AvgVariance) == math.Float64bits(b.AvgVariance) &&
		slices.EqualFunc(a.Weights, b.Weights, bits32) && slices.EqualFunc(a.LayerMeans, b.LayerMeans, bits32) &&
		slices.EqualFunc(a.FinalMeans, b.FinalMeans, bits32)
}
