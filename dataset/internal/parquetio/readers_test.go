package parquetio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// DuckDB, hyparquet and apache-arrow share no code with parquet-go or with
// whestbake. For whestbench's fixtures and for our files (the fixtures'
// rows rewritten, and synthetic rows over several row groups) they must
// read exactly the rows our reader reads, DuckDB must see the fixtures'
// column types, the footers' key-value metadata must be the fixtures', and
// apache-arrow must decode our ARROW:schema to the fixtures' Arrow types.
func TestIndependentReadersAgree(t *testing.T) {
	dir := t.TempDir()
	type file struct {
		path, like   string // like: the fixture of the same shape, if any
		width, depth int
		rows         []schema.Row
	}
	var files []file
	fixtureFiles, err := filepath.Glob(filepath.Join(fixtures, "*", "data", "*.parquet"))
	if err != nil || len(fixtureFiles) != 5 {
		t.Fatalf("fixture files: %v %v", fixtureFiles, err)
	}
	write := func(name string, shape bakeapi.Spec, rows []schema.Row) string {
		var buf bytes.Buffer
		if err := Write(&buf, shape, rows); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for i, fx := range fixtureFiles {
		w, d, rows, err := Read(fx)
		if err != nil {
			t.Fatal(err)
		}
		ours := write(fmt.Sprintf("fixture-%d.parquet", i), bakeapi.Spec{Width: w, Depth: d}, rows)
		for _, path := range []string{fx, ours} {
			files = append(files, file{
				path:  path,
				like:  fx,
				width: w,
				depth: d,
				rows:  rows,
			})
		}
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
		rows := schematest.Rows(s.shape, 10, s.rows)
		name := fmt.Sprintf("synthetic-%dx%d.parquet", s.shape.Width, s.shape.Depth)
		files = append(files, file{
			path:  write(name, s.shape, rows),
			width: s.shape.Width,
			depth: s.shape.Depth,
			rows:  rows,
		})
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	views := schematest.ReadParquet(t, paths)
	// The types and schema of single_split_v3_protocol (width 4, depth 2),
	// with other shapes substituted, are the expectation for synthetic files.
	ref := views[singleSplitShard]

	for _, f := range files {
		v := views[f.path]
		name, _ := filepath.Rel(filepath.Dir(filepath.Dir(f.path)), f.path)
		for reader, rows := range map[string][]schematest.ReaderRow{
			"duckdb":    v.DuckDB.Rows,
			"hyparquet": v.Hyparquet.Rows,
		} {
			if len(rows) != len(f.rows) {
				t.Errorf("%s: %s read %d rows, want %d", name, reader, len(rows), len(f.rows))
				continue
			}
			for i, r := range rows {
				if !schematest.RowsEqual(r.Row(t), f.rows[i]) {
					t.Errorf("%s: %s reads row %d differently", name, reader, i)
				}
			}
		}
		like := ref
		if f.like != "" {
			like = views[f.like]
		}
		if !reflect.DeepEqual(v.DuckDB.Types, ref.DuckDB.Types) {
			t.Errorf("%s: DuckDB types %v, whestbench's file %v",
				name, v.DuckDB.Types, ref.DuckDB.Types)
		}
		wantKV := [][2]string{
			{cdcKey, cdcValue},
			{schema.HFMetadataKey, schema.FeaturesJSON(f.width, f.depth)},
			{schema.ArrowSchemaKey, schema.ArrowSchema(f.width, f.depth)},
		}
		if f.like != "" {
			wantKV = like.Hyparquet.KV
		}
		if !reflect.DeepEqual(v.Hyparquet.KV, wantKV) {
			t.Errorf("%s: key-value metadata differs from whestbench's", name)
		}
		got := string(v.Arrow)
		if want := reshape(t, string(ref.Arrow), f.width, f.depth); got != want {
			t.Errorf("%s: apache-arrow decodes ARROW:schema as\n%s\n"+
				"whestbench's (reshaped) is\n%s", name, got, want)
		}
	}
}

// reshape substitutes width w and depth d into the decoded Arrow schema of
// a width-4, depth-2 file, arrowSchema.
func reshape(t *testing.T, arrowSchema string, w, d int) string {
	t.Helper()
	quoted := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[1 : len(b)-1])
	}
	return strings.NewReplacer(
		quoted(schema.FeaturesJSON(4, 2)), quoted(schema.FeaturesJSON(w, d)),
		"[[2, 4, 4], ", fmt.Sprintf("[[%d, %d, %d], ", d, w, w),
		"[[2, 4], ", fmt.Sprintf("[[%d, %d], ", d, w),
		"FixedSizeList[4]", fmt.Sprintf("FixedSizeList[%d]", w),
	).Replace(arrowSchema)
}
