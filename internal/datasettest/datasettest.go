// Package datasettest holds checks on dataset directories shared by tests of
// several packages.
package datasettest

import (
	"bytes"
	"errors"
	"io/fs"
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

// SameDataset fails unless got and want are the same finished dataset,
// byte for byte: the same parquet files by SameParquet, the same report,
// every file of dataset.ReportDir, and the same prepared Arrow tree, every
// file under dataset.PreparedDir. Only metadata.json and README.md may
// differ, as they record when and where the bake ran.
func SameDataset(t testing.TB, got, want string) {
	t.Helper()
	SameParquet(t, got, want)
	sameFiles(t, dataset.ReportDir, ReadReport(t, got), ReadReport(t, want))
	sameFiles(t, dataset.PreparedDir,
		readTree(t, got, dataset.PreparedDir),
		readTree(t, want, dataset.PreparedDir))
}

// sameFiles compares two folders' files by name, relative to folder.
func sameFiles(t testing.TB, folder string, g, w map[string][]byte) {
	t.Helper()
	if len(w) == 0 {
		t.Errorf("the local bake has no %s/", folder)
	}
	for name, data := range w {
		if other, ok := g[name]; !ok {
			t.Errorf("%s/%s is missing; the local bake has it", folder, name)
		} else if !bytes.Equal(other, data) {
			t.Errorf("%s/%s differs from the local bake (%d vs %d bytes)",
				folder, name, len(other), len(data))
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s/%s is not in the local bake", folder, name)
		}
	}
}

// readTree returns every file under dir/folder by its '/'-separated path
// relative to folder; none when there is no such folder.
func readTree(t testing.TB, dir, folder string) map[string][]byte {
	t.Helper()
	root := filepath.Join(dir, folder)
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return fs.SkipAll
		}
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// ReadTree returns every file under dir by its '/'-separated path.
func ReadTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	return readTree(t, dir, "")
}

// ReadReport returns every file of dir's report folder, dataset.ReportDir,
// by name, failing t when dir has none.
func ReadReport(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(filepath.Join(dir, dataset.ReportDir))
	if err != nil {
		t.Fatalf("%s has no report: %v", dir, err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, dataset.ReportDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

// SameRow reports whether two rows are equal bit for bit: floats are compared
// by their bits, so a NaN equals itself and -0 differs from +0.
func SameRow(a, b dataset.Row) bool {
	bits32 := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	return a.MLPID == b.MLPID &&
		a.Name == b.Name &&
		a.Seed == b.Seed &&
		a.Breakdown == b.Breakdown &&
		math.Float64bits(a.AvgVariance) == math.Float64bits(b.AvgVariance) &&
		slices.EqualFunc(a.Weights, b.Weights, bits32) &&
		slices.EqualFunc(a.LayerMeans, b.LayerMeans, bits32) &&
		slices.EqualFunc(a.FinalMeans, b.FinalMeans, bits32)
}
