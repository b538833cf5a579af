package dataset

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
)

const fixtures = "../testdata/whestbench-fixtures"

// A protocol-4.0 salt (bytes 0..31, whestbench's test salt) and its SHA-256.
const (
	testSalt       = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	testSaltDigest = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
)

// testRows makes n synthetic rows of shape with mlp_id start.. and values
// that differ per row, so misplaced rows are noticed.
func testRows(shape bakeapi.Spec, start, n int) []Row {
	w, d := shape.Width, shape.Depth
	rows := make([]Row, n)
	for i := range rows {
		id := start + i
		rng := rand.New(rand.NewPCG(uint64(id), 7))
		r := Row{
			MLPID:       int32(id),
			Name:        "mlp-" + string(rune('a'+id%26)),
			Seed:        int64(1000 + id),
			Weights:     make([]float32, d*w*w),
			LayerMeans:  make([]float32, d*w),
			FinalMeans:  make([]float32, w),
			AvgVariance: rng.Float64(),
			Breakdown:   Breakdown(w, d, 100, 1024, 0.5),
		}
		for j := range r.Weights {
			r.Weights[j] = float32(rng.NormFloat64())
		}
		for j := range r.LayerMeans {
			r.LayerMeans[j] = float32(rng.Float64())
		}
		copy(r.FinalMeans, r.LayerMeans[(d-1)*w:])
		rows[i] = r
	}
	return rows
}

// testInfo is a bake of total MLPs of shape, holding [start, end).
func testInfo(shape bakeapi.Spec, total, start, end int) BakeInfo {
	return BakeInfo{
		CreatedAt:        time.Date(2026, 11, 22, 10, 0, start, 0, time.UTC),
		Split:            "public",
		TotalMLPs:        total,
		Range:            [2]int{start, end},
		NSamples:         100,
		Width:            shape.Width,
		Depth:            shape.Depth,
		Hardware:         Hardware{Hostname: "host-a", OS: "Linux", OSRelease: "6.1", Machine: "x86_64", CPUBrand: "cpu-x", CPUCountLogical: 8, GoVersion: "go1.26.8"},
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
	if err := WriteDir(dir, NewBakeMetadata(info), shape, testRows(shape, start, end-start)); err != nil {
		t.Fatalf("WriteDir %s: %v", dir, err)
	}
	return dir
}

// wantErr fails unless err matches *T (via errors.As) and mentions every
// fragment.
func wantErr[T error](t *testing.T, err error, fragments ...string) {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("got error %v (%T), want %T", err, err, target)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
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
