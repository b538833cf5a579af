package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

// readersDir holds the Node script that reads parquet files with DuckDB,
// hyparquet and apache-arrow (testdata/readers/read.mjs).
const readersDir = "testdata/readers"

// readerView is what read.mjs reports for one file.
type readerView struct {
	DuckDB struct {
		Types map[string]string `json:"types"`
		Rows  []readerRow       `json:"rows"`
	} `json:"duckdb"`
	Hyparquet struct {
		KV   [][2]string `json:"kv"`
		Rows []readerRow `json:"rows"`
	} `json:"hyparquet"`
	Arrow json.RawMessage `json:"arrow"`
}

type readerRow struct {
	MLPID       int32         `json:"mlp_id"`
	Name        string        `json:"mlp_name"`
	Seed        string        `json:"mlp_seed"` // int64 as a decimal string
	Weights     [][][]float32 `json:"weights"`
	LayerMeans  [][]float32   `json:"all_layer_means"`
	FinalMeans  []float32     `json:"final_means"`
	AvgVariance float64       `json:"avg_variance"`
	Breakdown   string        `json:"sampling_budget_breakdown"`
}

func (r readerRow) row(t *testing.T) Row {
	t.Helper()
	seed, err := strconv.ParseInt(r.Seed, 10, 64)
	if err != nil {
		t.Fatalf("mlp_seed %q: %v", r.Seed, err)
	}
	out := Row{MLPID: r.MLPID, Name: r.Name, Seed: seed, AvgVariance: r.AvgVariance, Breakdown: r.Breakdown, FinalMeans: r.FinalMeans}
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
		msg := fmt.Sprintf(format, args...) + "; install with: make readers (npm install --prefix dataset/" + readersDir + ")"
		if os.Getenv("READERS_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		need("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(readersDir, "node_modules")); err != nil {
		need("the readers' npm packages are not installed")
	}
	return node
}

// runReaders runs read.mjs on files, or skips (fails with READERS_REQUIRED=1)
// when Node or the npm packages are missing.
func runReaders(t *testing.T, files []string) map[string]readerView {
	t.Helper()
	node := needReaders(t)
	abs := make([]string, len(files))
	for i, f := range files {
		abs[i], _ = filepath.Abs(f)
	}
	cmd := exec.Command(node, append([]string{"read.mjs"}, abs...)...)
	cmd.Dir = readersDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("read.mjs: %v\n%s", err, stderr.Bytes())
	}
	views := map[string]readerView{}
	if err := json.Unmarshal(out, &views); err != nil {
		t.Fatal(err)
	}
	got := map[string]readerView{}
	for i, f := range files {
		got[f] = views[abs[i]]
	}
	return got
}

// DuckDB, hyparquet and apache-arrow share no code with parquet-go or with
// whestbake. For whestbench's fixtures and for our files (the fixtures'
// rows rewritten, and synthetic rows over several row groups) they must
// read exactly the rows our reader reads, DuckDB must see the fixtures'
// column types, the footers' key-value metadata must be the fixtures', and
// apache-arrow must decode our ARROW:schema to the fixtures' Arrow types.
func TestIndependentReadersAgree(t *testing.T) {
	dir := t.TempDir()
	type file struct {
		path, like string // like: the fixture of the same shape, if any
		w, d       int
		rows       []Row
	}
	var files []file
	fixtureFiles, err := filepath.Glob(filepath.Join(fixtures, "*", "data", "*.parquet"))
	if err != nil || len(fixtureFiles) != 5 {
		t.Fatalf("fixture files: %v %v", fixtureFiles, err)
	}
	write := func(name string, shape bakeapi.Spec, rows []Row) string {
		var buf bytes.Buffer
		if err := WriteParquet(&buf, shape, rows); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for i, fx := range fixtureFiles {
		w, d, rows, err := ReadParquet(fx)
		if err != nil {
			t.Fatal(err)
		}
		ours := write(fmt.Sprintf("fixture-%d.parquet", i), bakeapi.Spec{Width: w, Depth: d}, rows)
		files = append(files, file{fx, fx, w, d, rows}, file{ours, fx, w, d, rows})
	}
	defer func(b int64) { rowGroupFloatBytes = b }(rowGroupFloatBytes)
	for _, s := range []struct {
		shape      bakeapi.Spec
		rows       int
		groupBytes int64
	}{
		{bakeapi.Spec{Width: 8, Depth: 3}, 130, 64 << 20}, // three row groups of 64, 64 and 2
		{bakeapi.Spec{Width: 16, Depth: 1}, 5, 64 << 20},
		{bakeapi.Spec{Width: 4, Depth: 2}, 0, 64 << 20}, // no row groups at all
		// A row group a row, streamed to the file as large rows are
		// (the bound lowered to reach it with a small shape).
		{bakeapi.Spec{Width: 256, Depth: 2}, 3, 64 << 10},
	} {
		rowGroupFloatBytes = s.groupBytes
		rows := testRows(s.shape, 10, s.rows)
		path := write(fmt.Sprintf("synthetic-%dx%d.parquet", s.shape.Width, s.shape.Depth), s.shape, rows)
		files = append(files, file{path, "", s.shape.Width, s.shape.Depth, rows})
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	views := runReaders(t, paths)
	// The types and schema of single_split_v3_protocol (width 4, depth 2),
	// with other shapes substituted, are the expectation for synthetic files.
	ref := views[filepath.Join(fixtures, "single_split_v3_protocol", "data", "public-00000-of-00001.parquet")]

	for _, f := range files {
		v := views[f.path]
		name, _ := filepath.Rel(filepath.Dir(filepath.Dir(f.path)), f.path)
		for reader, rows := range map[string][]readerRow{"duckdb": v.DuckDB.Rows, "hyparquet": v.Hyparquet.Rows} {
			if len(rows) != len(f.rows) {
				t.Errorf("%s: %s read %d rows, want %d", name, reader, len(rows), len(f.rows))
				continue
			}
			for i, r := range rows {
				if !rowsEqual(r.row(t), f.rows[i]) {
					t.Errorf("%s: %s reads row %d differently", name, reader, i)
				}
			}
		}
		like := ref
		if f.like != "" {
			like = views[f.like]
		}
		if !reflect.DeepEqual(v.DuckDB.Types, ref.DuckDB.Types) {
			t.Errorf("%s: DuckDB types %v, whestbench's file %v", name, v.DuckDB.Types, ref.DuckDB.Types)
		}
		wantKV := [][2]string{{cdcKey, cdcValue}, {hfMetadataKey, featuresJSON(f.w, f.d)}, {arrowSchemaKey, arrowSchema(f.w, f.d)}}
		if f.like != "" {
			wantKV = like.Hyparquet.KV
		}
		if !reflect.DeepEqual(v.Hyparquet.KV, wantKV) {
			t.Errorf("%s: key-value metadata differs from whestbench's", name)
		}
		if got, want := string(v.Arrow), reshape(t, string(ref.Arrow), f.w, f.d); got != want {
			t.Errorf("%s: apache-arrow decodes ARROW:schema as\n%s\nwhestbench's (reshaped) is\n%s", name, got, want)
		}
	}
}

// reshape substitutes width w and depth d into the decoded Arrow schema of
// a width-4, depth-2 file.
func reshape(t *testing.T, schema string, w, d int) string {
	t.Helper()
	quoted := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[1 : len(b)-1])
	}
	return strings.NewReplacer(
		quoted(featuresJSON(4, 2)), quoted(featuresJSON(w, d)),
		"[[2, 4, 4], ", fmt.Sprintf("[[%d, %d, %d], ", d, w, w),
		"[[2, 4], ", fmt.Sprintf("[[%d, %d], ", d, w),
		"FixedSizeList[4]", fmt.Sprintf("FixedSizeList[%d]", w),
	).Replace(schema)
}
