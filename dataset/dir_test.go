package dataset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

func TestWriteDirReadDirRoundTrip(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 3}
	info := testInfo(shape, 5, 0, 0)
	info.Split = "my-custom-split"
	dir := writeTestDir(t, t.TempDir(), "out", info)
	wantFiles := []string{"my-custom-split-00000-of-00001.parquet"}
	if got := dirEntries(t, filepath.Join(dir, "data")); !slices.Equal(got, wantFiles) {
		t.Errorf("data/ holds %v", got)
	}
	d, err := ReadDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Splits) != 1 ||
		d.Splits[0].Name != "my-custom-split" ||
		d.Splits[0].Width != shape.Width ||
		d.Splits[0].Depth != shape.Depth {
		t.Fatalf("splits %+v", d.Splits)
	}
	want := schematest.Rows(shape, 0, 5)
	for i, r := range d.Splits[0].Rows {
		if !schematest.RowsEqual(r, want[i]) {
			t.Errorf("row %d differs", i)
		}
	}
	mdBytes, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if enc, _ := NewBakeMetadata(info).MarshalJSON(); string(enc) != string(mdBytes) {
		t.Error("metadata.json is not the encoded metadata")
	}
	card, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.HasPrefix(string(card), "---\n") {
		t.Errorf("README.md missing or without front matter: %v", err)
	}
}

func TestReadDirFixtures(t *testing.T) {
	for name, splits := range map[string][]string{
		"single_split_v3_protocol": {"public"},
		"multi_split_v3.0":         {"public", "holdout"},
		"multi_config_v3.0":        {"public", "holdout"},
	} {
		d, err := ReadDir(filepath.Join(fixtures, name), false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, s := range d.Splits {
			got = append(got, s.Name)
			if len(s.Rows) == 0 || len(s.Files) != 1 {
				t.Errorf("%s/%s: %d rows, files %v", name, s.Name, len(s.Rows), s.Files)
			}
		}
		if !slices.Equal(got, splits) {
			t.Errorf("%s: splits %v want %v", name, got, splits)
		}
	}
}

func TestWriteDirRefusesExistingOutputFirst(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckOutputFree(filepath.Join(parent, "free")); err != nil {
		t.Errorf("free path refused: %v", err)
	}
	err := CheckOutputFree(dir)
	schematest.WantErr[*OutputExistsError](t, err, dir, "--output", "remove it")
	if !errors.Is(err, fs.ErrExist) {
		t.Error("OutputExistsError is not fs.ErrExist")
	}
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	// Invalid metadata too: the existing directory must be reported first.
	err = WriteDir(dir, NewObject(), shape, nil)
	schematest.WantErr[*OutputExistsError](t, err, dir)
	if got := dirEntries(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("parent holds %v", got)
	}
}

func TestWriteDirLeavesNothingOnFailure(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	md := NewBakeMetadata(testInfo(shape, 3, 0, 0))
	rows := schematest.Rows(shape, 0, 3)
	wide := bakeapi.Spec{Width: 8, Depth: 2}
	shallow := bakeapi.Spec{Width: 4, Depth: 1}
	for name, c := range map[string]struct {
		md    Metadata
		shape bakeapi.Spec
		rows  []Row
		msg   string
	}{
		"count":     {md, shape, rows[:2], "n_mlps=3"},
		"width":     {md, wide, schematest.Rows(wide, 0, 3), "width=4"},
		"row shape": {md, shape, append(rows[:2:2], schematest.Rows(shallow, 2, 1)...), "weights"},
		"invalid":   {NewObject().Set("schema_version", "2.4"), shape, rows, "schema_version"},
	} {
		err := WriteDir(filepath.Join(parent, "out"), c.md, c.shape, c.rows)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, c.msg)
		}
		if got := dirEntries(t, parent); len(got) != 0 {
			t.Fatalf("%s: failed write left %v", name, got)
		}
	}
}

func TestReadDirCatchesLyingMetadata(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	for _, c := range []struct {
		key  string
		val  any
		want []string
	}{
		{"n_mlps", 7, []string{"n_mlps=7", "3 rows"}},
		{"width", 5, []string{"width=5", "width=4"}},
		{"depth", 1, []string{"depth=1", "depth=2"}},
	} {
		dir := writeTestDir(t, t.TempDir(), "out", testInfo(shape, 3, 0, 0))
		md, err := ReadMetadata(dir)
		if err != nil {
			t.Fatal(err)
		}
		md.Set(c.key, c.val)
		b, _ := md.MarshalJSON()
		if err := os.WriteFile(filepath.Join(dir, "metadata.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = ReadDir(dir, false)
		schematest.WantErr[*InvalidDatasetError](t, err, c.want...)
	}
}

func TestReadDirRefusals(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	parent := t.TempDir()
	partial := writeTestDir(t, parent, "partial", testInfo(shape, 10, 4, 7))
	_, err := ReadDir(partial, false)
	schematest.WantErr[*InvalidDatasetError](t, err,
		"this is a partial dataset (mlp_range=[4, 7], total_n_mlps=10). "+
			"Run `whestbake dataset merge <partials> --output <dir>` first.")
	d, err := ReadDir(partial, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Splits[0].Rows[0].MLPID != 4 {
		t.Errorf("partial first mlp_id %d", d.Splits[0].Rows[0].MLPID)
	}

	_, err = ReadDir(filepath.Join(partial, "metadata.json"), true)
	schematest.WantErr[*InvalidDatasetError](t, err, "is a file, not a directory")
	_, err = ReadDir(filepath.Join(parent, "nope"), true)
	schematest.WantErr[*InvalidDatasetError](t, err, "does not exist")
	_, err = ReadDir(filepath.Join(partial, "data"), true)
	schematest.WantErr[*InvalidDatasetError](t, err, "missing metadata.json")

	// A stray parquet file that no split claims.
	complete := writeTestDir(t, parent, "complete", testInfo(shape, 3, 0, 0))
	stray := filepath.Join(complete, "data", "public-extra-00000-of-00001.parquet")
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadDir(complete, false)
	schematest.WantErr[*InvalidDatasetError](t, err,
		"public-extra-00000-of-00001.parquet", "belong to no split")
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	// Shards must form a complete set.
	err = os.Rename(filepath.Join(complete, "data", "public-00000-of-00001.parquet"),
		filepath.Join(complete, "data", "public-00000-of-00002.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadDir(complete, false)
	schematest.WantErr[*InvalidDatasetError](t, err, "missing shard public-00001-of-00002.parquet")
}

func TestShardNames(t *testing.T) {
	for _, c := range []struct {
		file  string
		split string
		ok    bool
	}{
		{"my-custom-split-00000-of-00001.parquet", "my-custom-split", true},
		{"public-00003-of-00010.parquet", "public", true},
		{"public-0000-of-00001.parquet", "", false},
		{"public.parquet", "", false},
		{"public-00000-of-00001.parquet.tmp", "", false},
	} {
		split, _, _, ok := parseShardName(c.file)
		if ok != c.ok || split != c.split {
			t.Errorf("parseShardName(%s) = %q %v", c.file, split, ok)
		}
	}
	files := []string{"my-00000-of-00001.parquet", "my-custom-split-00000-of-00001.parquet"}
	got, err := splitShards("data", "my", files)
	if err != nil || !slices.Equal(got, files[:1]) {
		t.Errorf("split my: %v %v", got, err)
	}
	got, err = splitShards("data", "my-custom-split", files)
	if err != nil || !slices.Equal(got, files[1:]) {
		t.Errorf("split my-custom-split: %v %v", got, err)
	}
}
