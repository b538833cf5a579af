package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

const fixtures = "../testdata/whestbench-fixtures"

// A protocol-4.0 salt (bytes 0..31, whestbench's test salt) and its SHA-256.
const (
	testSalt       = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	testSaltDigest = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
)

// testInfo is a bake of total MLPs of shape, holding [start, end).
func testInfo(shape bakeapi.Spec, total, start, end int) BakeInfo {
	return BakeInfo{
		CreatedAt: time.Date(2026, 11, 22, 10, 0, start, 0, time.UTC),
		Split:     "public",
		TotalMLPs: total,
		Range:     [2]int{start, end},
		NSamples:  100,
		Width:     shape.Width,
		Depth:     shape.Depth,
		Hardware: Hardware{
			Hostname:        "host-a",
			OS:              "Linux",
			OSRelease:       "6.1",
			Machine:         "x86_64",
			CPUBrand:        "cpu-x",
			CPUCountLogical: 8,
			GoVersion:       "go1.26.8",
		},
		WhestbakeVersion: "0.1.0",
		Sampler:          "philox",
		Engine:           "cpu",
		AlgorithmVersion: "philox-1",
		Device:           "cpu",
		ChunkSize:        4096,
		SeedFileSHA256:   strings.Repeat("0", 64),
	}
}

// writeTestDir writes rows [start, end) of a total-MLP bake under parent/name.
func writeTestDir(t *testing.T, parent, name string, info BakeInfo) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	shape := bakeapi.Spec{Width: info.Width, Depth: info.Depth}
	start, end := info.Range[0], info.Range[1]
	if start == 0 && end == 0 {
		end = info.TotalMLPs
	}
	rows := schematest.Rows(shape, start, end-start)
	if err := WriteDir(dir, NewBakeMetadata(info), shape, rows); err != nil {
		t.Fatalf("WriteDir %s: %v", dir, err)
	}
	return dir
}

// copyMultiSplitFixture copies whestbench's multi-split fixture to dir.
func copyMultiSplitFixture(t *testing.T, dir string) {
	t.Helper()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(fixtures, "multi_split_v3.0"))); err != nil {
		t.Fatal(err)
	}
}

// wantErr is a check that an error is an E whose text holds every
// fragment.
func wantErr[E error](fragments ...string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		schematest.WantErr[E](t, err, fragments...)
	}
}

// dirEntries lists the names in dir, to prove a failed write left nothing.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// preparedPaths are the files of dir's prepared tree as prepare-arrow
// writes it.
func preparedPaths(t *testing.T, dir string) []string {
	t.Helper()
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := d.PreparedPaths()
	if err != nil {
		t.Fatal(err)
	}
	return paths
}
