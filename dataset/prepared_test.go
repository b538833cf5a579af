package dataset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/prepared"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// combineTestSplits writes two splits of shape (n1 and n2 rows) and
// combines them into parent/out with opts.
func combineTestSplits(
	t *testing.T,
	parent string,
	shape bakeapi.Spec,
	n1, n2 int,
	opts ...CombineOption,
) string {
	t.Helper()
	pub := testInfo(shape, n1, 0, 0)
	hold := testInfo(shape, n2, 0, 0)
	hold.Split = "holdout"
	hold.Config = "holdout"
	a := writeTestDir(t, parent, "a", pub)
	b := writeTestDir(t, parent, "b", hold)
	out := filepath.Join(parent, "out")
	if err := Combine([]string{a, b}, out, "", opts...); err != nil {
		t.Fatal(err)
	}
	return out
}

// apache-arrow, which shares no code with whestbake, must read from each
// prepared split's stream exactly the rows of the split's parquet files
// (read by our reader, which the parquet readers test holds to DuckDB and
// hyparquet), one record batch a row, and the same Arrow schema that
// apache-arrow decodes from the parquet files' ARROW:schema: for
// whestbench's own multi-split fixture (prepare-arrow) and for combined
// synthetic splits of two shapes, one of them large rows.
func TestPreparedArrowIndependentReader(t *testing.T) {
	parent := t.TempDir()
	fixture := filepath.Join(parent, "fixture")
	copyMultiSplitFixture(t, fixture)
	if err := PrepareArrow(fixture); err != nil {
		t.Fatal(err)
	}
	dirs := []string{
		fixture,
		combineTestSplits(t, filepath.Join(parent, "small"),
			bakeapi.Spec{Width: 8, Depth: 3}, 130, 1),
		combineTestSplits(t, filepath.Join(parent, "large"),
			bakeapi.Spec{Width: 256, Depth: 2}, 3, 2),
	}
	var streams, parquets []string
	want := map[string][]Row{}
	parquetOf := map[string]string{}
	for _, dir := range dirs {
		d, err := ReadDir(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Splits {
			p := filepath.Join(dir, PreparedDir, s.Name, prepared.ArrowFile)
			streams = append(streams, p)
			parquets = append(parquets, s.Files[0])
			want[p] = s.Rows
			parquetOf[p] = s.Files[0]
		}
	}
	got := schematest.ReadStreams(t, streams)
	schemas := schematest.ReadParquet(t, parquets)
	for _, p := range streams {
		v := got[p]
		if len(v.Rows) != len(want[p]) || v.Batches != len(want[p]) {
			t.Errorf("%s: apache-arrow read %d rows in %d batches, want %d rows, one a batch",
				p, len(v.Rows), v.Batches, len(want[p]))
			continue
		}
		for i, r := range v.Rows {
			if !schematest.RowsEqual(r.Row(t), want[p][i]) {
				t.Errorf("%s: row %d differs from the parquet's", p, i)
			}
		}
		if g, w := compactRaw(t, v.Schema), compactRaw(t, schemas[parquetOf[p]].Arrow); g != w {
			t.Errorf("%s: stream schema\n%s\nthe parquet's ARROW:schema\n%s", p, g, w)
		}
	}
}

func compactRaw(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The two JSON files of a prepared split against the datasets library's
// format (src/datasets/arrow_dataset.py save_to_disk, info.py DatasetInfo,
// huggingface/datasets): state.json holds exactly the keys save_to_disk
// writes, sorted (json.dump sort_keys=True, indent=2), with values
// load_from_disk accepts; dataset_info.json holds only DatasetInfo fields,
// top-level keys sorted, and its features are those whestbench's own files
// carry in their huggingface footer entry.
func TestPreparedJSONFollowsDatasetsFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fixture")
	copyMultiSplitFixture(t, dir)
	if err := PrepareArrow(dir); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(fixtures, "multi_split_v3.0", "data", "public-00000-of-00001.parquet")
	fixture, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(fixture), int64(len(fixture)))
	if err != nil {
		t.Fatal(err)
	}
	hf, ok := pf.Lookup("huggingface")
	if !ok {
		t.Fatal("the fixture has no huggingface entry")
	}
	var footer struct {
		Info struct {
			Features json.RawMessage `json:"features"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(hf), &footer); err != nil {
		t.Fatal(err)
	}
	// DatasetInfo's fields (info.py), and save_to_disk's state keys.
	datasetInfoFields := []string{
		"description", "citation", "homepage", "license", "features", "post_processed",
		"supervised_keys", "builder_name", "dataset_name", "config_name", "version", "splits",
		"download_checksums", "download_size", "post_processing_size", "dataset_size",
		"size_in_bytes",
	}
	stateKeys := []string{
		"_data_files", "_fingerprint", "_format_columns", "_format_kwargs", "_format_type",
		"_output_all_columns", "_split",
	}

	for _, split := range []string{"public", "holdout"} {
		folder := filepath.Join(dir, PreparedDir, split)
		infoText, err1 := os.ReadFile(filepath.Join(folder, "dataset_info.json"))
		stateText, err2 := os.ReadFile(filepath.Join(folder, "state.json"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		keys := func(text []byte) []string {
			v, err := pyjson.Loads(text)
			if err != nil {
				t.Fatal(err)
			}
			return v.(*Object).Keys()
		}
		ik := keys(infoText)
		if !slices.IsSorted(ik) {
			t.Errorf("dataset_info.json keys %v are not sorted", ik)
		}
		for _, k := range ik {
			if !slices.Contains(datasetInfoFields, k) {
				t.Errorf("dataset_info.json has %q, which is no DatasetInfo field", k)
			}
		}
		var info map[string]json.RawMessage
		if err := json.Unmarshal(infoText, &info); err != nil {
			t.Fatal(err)
		}
		if g, w := compactRaw(t, info["features"]), compactRaw(t, footer.Info.Features); g != w {
			t.Errorf("dataset_info.json features\n%s\nwhestbench's file has\n%s", g, w)
		}
		for _, k := range []string{"description", "citation", "homepage", "license"} {
			if string(info[k]) != `""` {
				t.Errorf("dataset_info.json %s = %s, want \"\" (a str field)", k, info[k])
			}
		}
		if sk := keys(stateText); !reflect.DeepEqual(sk, stateKeys) {
			t.Errorf("state.json keys %v, save_to_disk writes %v", sk, stateKeys)
		}
		var state struct {
			DataFiles        []map[string]string `json:"_data_files"`
			Fingerprint      string              `json:"_fingerprint"`
			FormatColumns    *[]string           `json:"_format_columns"`
			FormatKwargs     map[string]any      `json:"_format_kwargs"`
			FormatType       *string             `json:"_format_type"`
			OutputAllColumns bool                `json:"_output_all_columns"`
			Split            string              `json:"_split"`
		}
		if err := json.Unmarshal(stateText, &state); err != nil {
			t.Fatal(err)
		}
		dataFiles := []map[string]string{{"filename": "data-00000-of-00001.arrow"}}
		if !reflect.DeepEqual(state.DataFiles, dataFiles) ||
			state.FormatColumns != nil ||
			state.FormatType != nil ||
			len(state.FormatKwargs) != 0 ||
			state.OutputAllColumns ||
			state.Split != split {
			t.Errorf("state.json %+v", state)
		}
		// datasets' validate_fingerprint: a non-empty string of at most 64
		// characters, none of them a path separator or another character
		// Windows forbids in a file name.
		if f := state.Fingerprint; f == "" || len(f) > 64 || strings.ContainsAny(f, `<>:/\|?*`) {
			t.Errorf("fingerprint %q", f)
		}
		// Python's json.dump(indent=2): two-space indents, no trailing newline.
		for _, text := range [][]byte{infoText, stateText} {
			if !bytes.HasPrefix(text, []byte("{\n  \"")) || bytes.HasSuffix(text, []byte("\n")) {
				t.Errorf("not json.dump(indent=2) text: %.40q…", text)
			}
		}
	}
}

func TestCombineWritesPreparedSplits(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	out := combineTestSplits(t, filepath.Join(parent, "with"), shape, 3, 2)
	md, err := ReadMetadata(out)
	if err != nil {
		t.Fatal(err)
	}
	keys := md.Keys()
	if keys[len(keys)-1] != "prepared_splits" {
		t.Errorf("metadata keys %v: prepared_splits comes last, as whestbench writes it", keys)
	}
	block, _ := md.GetObject("prepared_splits")
	text, _ := pyjson.Dumps(block, false)
	want := `{"public": {"path": "prepared/public", "format": "save_to_disk"}, ` +
		`"holdout": {"path": "prepared/holdout", "format": "save_to_disk"}}`
	if string(text) != want {
		t.Errorf("prepared_splits %s, want %s", text, want)
	}
	paths := preparedPaths(t, out)
	if len(paths) != 6 {
		t.Errorf("the prepared tree is %q, want one Arrow shard and two JSON files a split", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); err != nil {
			t.Error(err)
		}
	}
	// The same inputs give the same bytes (the fingerprint is the stream's).
	again := combineTestSplits(t, filepath.Join(parent, "again"), shape, 3, 2)
	for _, p := range paths {
		a, _ := os.ReadFile(filepath.Join(out, p))
		b, _ := os.ReadFile(filepath.Join(again, p))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two combines of the same rows", p)
		}
	}

	skipped := combineTestSplits(t, filepath.Join(parent, "without"), shape, 3, 2,
		CombineSkipPrepared())
	if md, _ := ReadMetadata(skipped); md.Has("prepared_splits") {
		t.Error("CombineSkipPrepared left prepared_splits in the metadata")
	}
	if _, err := os.Stat(filepath.Join(skipped, PreparedDir)); err == nil {
		t.Error("CombineSkipPrepared left a prepared/ folder")
	}
	// prepare-arrow adds what the skip left out, with the same bytes.
	if err := PrepareArrow(skipped); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, "metadata.json") {
		a, _ := os.ReadFile(filepath.Join(out, p))
		b, _ := os.ReadFile(filepath.Join(skipped, p))
		if !bytes.Equal(a, b) {
			t.Errorf("%s after prepare-arrow differs from combine's", p)
		}
	}
	// Again: a file prepare-arrow did not write is refused, not deleted
	// (as the report refuses); its own files are replaced, and nothing is
	// left beside them.
	stray := filepath.Join(skipped, PreparedDir, "public", "stray")
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	schematest.WantErr[*InvalidDatasetError](t, PrepareArrow(skipped),
		`holds ["prepared/public/stray"], which prepare-arrow did not write`)
	if err := os.Remove(stray); err != nil {
		t.Fatalf("the refused prepare-arrow lost the stray file: %v", err)
	}
	own := filepath.Join(skipped, PreparedDir, "public", prepared.ArrowFile)
	if err := os.Truncate(own, 100); err != nil {
		t.Fatal(err)
	}
	if err := PrepareArrow(skipped); err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(out, PreparedDir, "public", prepared.ArrowFile)
	if !bytes.Equal(readAll(t, own), readAll(t, built)) {
		t.Error("a rebuild did not restore the truncated stream")
	}
	wantFiles := []string{"data-00000-of-00001.arrow", "dataset_info.json", "state.json"}
	got := dirEntries(t, filepath.Join(skipped, PreparedDir, "public"))
	if !slices.Equal(got, wantFiles) {
		t.Errorf("prepared/public after a rebuild holds %v", got)
	}
	hidden := func(n string) bool { return strings.HasPrefix(n, ".") }
	if got := dirEntries(t, skipped); slices.ContainsFunc(got, hidden) {
		t.Errorf("prepare-arrow left %v", got)
	}
	if _, err := Open(skipped, false); err != nil {
		t.Errorf("the dataset no longer opens: %v", err)
	}
}

func TestPrepareArrowRefusesASingleSplit(t *testing.T) {
	info := testInfo(bakeapi.Spec{Width: 4, Depth: 2}, 3, 0, 0)
	dir := writeTestDir(t, t.TempDir(), "single", info)
	err := PrepareArrow(dir)
	schematest.WantErr[*InvalidDatasetError](t, err,
		"only meaningful for multi-split datasets", "combine-splits")
	if _, err := os.Stat(filepath.Join(dir, PreparedDir)); err == nil {
		t.Error("a refused prepare-arrow wrote prepared/")
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
