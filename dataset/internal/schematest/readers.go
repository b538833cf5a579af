package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// readersDir holds the Node scripts that read parquet files with DuckDB,
// hyparquet and apache-arrow (read.mjs) and Arrow IPC streams with
// apache-arrow (stream.mjs): dataset/testdata/readers, found from this
// file, since each package's tests run in their own directory.
func readersDir() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "testdata", "readers")
}

// ParquetView is what read.mjs reports for one parquet file.
type ParquetView struct {
	DuckDB struct {
		Types map[string]string `json:"types"`
		Rows  []ReaderRow       `json:"rows"`
	} `json:"duckdb"`
	Hyparquet struct {
		KV   [][2]string `json:"kv"`
		Rows []ReaderRow `json:"rows"`
	} `json:"hyparquet"`
	Arrow json.RawMessage `json:"arrow"`
}

// StreamView is what stream.mjs reports for one Arrow IPC stream file.
type StreamView struct {
	Schema  json.RawMessage `json:"schema"`
	Batches int             `json:"batches"`
	Rows    []ReaderRow     `json:"rows"`
}

// ReaderRow is a row as the readers print it: arrays nested, the seed as
// a decimal string (JavaScript numbers hold no int64).
type ReaderRow struct {
	MLPID       int32         `json:"mlp_id"`
	Name        string        `json:"mlp_name"`
	Seed        string        `json:"mlp_seed"`
	Weights     [][][]float32 `json:"weights"`
	LayerMeans  [][]float32   `json:"all_layer_means"`
	FinalMeans  []float32     `json:"final_means"`
	AvgVariance float64       `json:"avg_variance"`
	Breakdown   string        `json:"sampling_budget_breakdown"`
}

// Row is r with its arrays flattened, as schema.Row holds them.
func (r ReaderRow) Row(t *testing.T) schema.Row {
	t.Helper()
	seed, err := strconv.ParseInt(r.Seed, 10, 64)
	if err != nil {
		t.Fatalf("mlp_seed %q: %v", r.Seed, err)
	}
	out := schema.Row{
		MLPID:       r.MLPID,
		Name:        r.Name,
		Seed:        seed,
		AvgVariance: r.AvgVariance,
		Breakdown:   r.Breakdown,
		FinalMeans:  r.FinalMeans,
	}
	for _, layer := range r.Weights {
		for _, row := range layer {
			out.Weights = append(out.Weights, row...)
		}
	}
	for _, layer := range r.LayerMeans {
		out.LayerMeans = append(out.LayerMeans, layer...)
	}
	return out
}

// needReaders returns node's path, or skips (fails with READERS_REQUIRED=1)
// when Node or the readers' npm packages are missing.
func needReaders(t *testing.T) string {
	t.Helper()
	need := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...) +
			"; install with: make readers (npm install --prefix dataset/testdata/readers)"
		if os.Getenv("READERS_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		need("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(readersDir(), "node_modules")); err != nil {
		need("the readers' npm packages are not installed")
	}
	return node
}

// ReadParquet runs read.mjs on files, or skips (fails with
// READERS_REQUIRED=1) when Node or the npm packages are missing.
func ReadParquet(t *testing.T, files []string) map[string]ParquetView {
	t.Helper()
	return runReader[ParquetView](t, "read.mjs", files)
}

// ReadStreams runs stream.mjs on Arrow IPC stream files, or skips as
// ReadParquet does.
func ReadStreams(t *testing.T, files []string) map[string]StreamView {
	t.Helper()
	return runReader[StreamView](t, "stream.mjs", files)
}

// runReader runs script on files and returns its report by file.
func runReader[View any](t *testing.T, script string, files []string) map[string]View {
	t.Helper()
	node := needReaders(t)
	abs := make([]string, len(files))
	for i, f := range files {
		abs[i], _ = filepath.Abs(f)
	}
	cmd := exec.Command(node, append([]string{script}, abs...)...)
	cmd.Dir = readersDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.Bytes())
	}
	views := map[string]View{}
	if err := json.Unmarshal(out, &views); err != nil {
		t.Fatal(err)
	}
	got := map[string]View{}
	for i, f := range files {
		got[f] = views[abs[i]]
	}
	return got
}
