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
// hyparquet and apache-arrow, read.mjs, and Arrow IPC streams with
// apache-arrow, stream.mjs: dataset/testdata/readers, found from this
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

// ReaderRow is a row as the readers print it, a column by name: arrays
// nested, int64 values as decimal strings, since JavaScript numbers hold
// no int64.
type ReaderRow map[string]json.RawMessage

// Row is r with its arrays flattened, as schema.Row holds them.
func (r ReaderRow) Row(t *testing.T) schema.Row {
	t.Helper()
	var out schema.Row
	for i := range schema.Columns {
		c := &schema.Columns[i]
		raw, ok := r[c.Name]
		if !ok {
			t.Fatalf("the reader's row has no %s", c.Name)
		}
		if err := readerValue(c.Of(&out), raw, len(c.Shape)); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
	}
	return out
}

// readerValue decodes raw, a column's value as a reader prints it, into
// the row's field p; an array nested depth lists deep is flattened.
func readerValue(p any, raw json.RawMessage, depth int) error {
	switch p := p.(type) {
	case *int64:
		var decimal string
		if err := json.Unmarshal(raw, &decimal); err != nil {
			return err
		}
		var err error
		*p, err = strconv.ParseInt(decimal, 10, 64)
		return err
	case *[]float32:
		return flatten(p, raw, depth)
	}
	return json.Unmarshal(raw, p)
}

// flatten appends the values of raw, lists nested depth deep, to out, each
// parsed as a float32 as Go's JSON decoder parses one.
func flatten(out *[]float32, raw json.RawMessage, depth int) error {
	if depth == 0 {
		x, err := strconv.ParseFloat(string(raw), 32)
		*out = append(*out, float32(x))
		return err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return err
	}
	for _, item := range items {
		if err := flatten(out, item, depth-1); err != nil {
			return err
		}
	}
	return nil
}

// needReaders returns node's path, or skips when Node or the readers' npm
// packages are missing. With READERS_REQUIRED=1 it fails instead.
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

// ReadParquet runs read.mjs on files, or skips when Node or the npm
// packages are missing. With READERS_REQUIRED=1 it fails instead.
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
