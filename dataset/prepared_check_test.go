package dataset

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/prepared"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// editMetadata rewrites dir's metadata.json with edit applied.
func editMetadata(t *testing.T, dir string, edit func(md Metadata)) {
	t.Helper()
	md, err := ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(md)
	data, err := encodeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// combineOtherRows combines a public and a holdout split of shape (n1 and
// n2 rows) whose rows are those of other MLPs than combineTestSplits'
// (other seeds, weights and means under the same ids).
func combineOtherRows(t *testing.T, parent string, shape bakeapi.Spec, n1, n2 int) string {
	t.Helper()
	var dirs []string
	for _, s := range []struct {
		split string
		mlps  int
	}{{"public", n1}, {"holdout", n2}} {
		info := testInfo(shape, s.mlps, 0, 0)
		info.Split = s.split
		info.Config = s.split
		rows := schematest.Rows(shape, 1000, s.mlps)
		for i := range rows {
			rows[i].MLPID = int32(i)
		}
		dir := filepath.Join(parent, s.split)
		if err := WriteDir(dir, NewBakeMetadata(info), shape, rows); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	out := filepath.Join(parent, "out")
	if err := Combine(dirs, out, ""); err != nil {
		t.Fatal(err)
	}
	return out
}

// The hostile dataset, one wrong thing at a time: each passed
// inspect, verify and upload, and whestbench's loader would have read it
// instead of the parquet files, or from outside the dataset. Each is
// refused by CheckPrepared and ScanPrepared with the file named and the
// repair; prepare-arrow repairs what it writes, and refuses to delete what
// it did not.
func TestPreparedCheckRefusesHostileTrees(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	clean := combineTestSplits(t, filepath.Join(parent, "clean"), shape, 5, 3)
	other := combineOtherRows(t, filepath.Join(parent, "other"), shape, 5, 3)
	if err := CheckPrepared(clean); err != nil {
		t.Fatalf("a combined dataset: %v", err)
	}
	inPrepared := func(split, file string) string { return filepath.Join(PreparedDir, split, file) }
	arrow := func(split string) string { return inPrepared(split, prepared.ArrowFile) }
	state := func(split string) string { return inPrepared(split, prepared.StateFile) }
	datasetInfo := func(split string) string { return inPrepared(split, prepared.InfoFile) }
	for _, c := range []struct {
		name     string
		spoil    func(t *testing.T, dir string)
		want     []string
		repaired bool // prepare-arrow repairs it; else it refuses and changes nothing
	}{
		{"public holds another seed's rows", func(t *testing.T, dir string) {
			replaceDir(t,
				filepath.Join(dir, PreparedDir, "public"),
				filepath.Join(other, PreparedDir, "public"))
		}, []string{
			arrow("public") + ": differs from the stream of the rows of " +
				"data/public-*.parquet at byte",
			"in row 0",
		}, true},
		{"a weight of row 2 changed", func(t *testing.T, dir string) {
			flipByteOfRow(t, dir, "public", 2)
		}, []string{arrow("public") + ": differs", "in row 2"}, true},
		{"holdout truncated", func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, arrow("holdout")), 0.5)
		}, []string{arrow("holdout") + ": ends at byte", "it is truncated"}, true},
		{"holdout emptied", func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, arrow("holdout")), 0)
		}, []string{
			arrow("holdout") + ": ends at byte 0, " +
				"in its schema (the parquet files have width 4 and depth 2)",
		}, true},
		{"bytes after the end", func(t *testing.T, dir string) {
			appendBytes(t, filepath.Join(dir, arrow("public")),
				[]byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0})
		}, []string{arrow("public") + ": goes on after the end of the stream"}, true},
		{"the arrow file missing", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, arrow("public")))
		}, []string{arrow("public") + ": cannot be read"}, true},
		{"state.json of another split", func(t *testing.T, dir string) {
			copyOver(t, filepath.Join(dir, state("holdout")), filepath.Join(dir, state("public")))
		}, []string{state("public") + ": is not what prepare-arrow writes"}, true},
		{"dataset_info.json of another shape", func(t *testing.T, dir string) {
			info, _ := prepared.InfoJSON(8, 2)
			putFile(t, filepath.Join(dir, datasetInfo("public")), info)
		}, []string{
			datasetInfo("public") + ": is not what prepare-arrow writes " +
				"for split \"public\" of width 4 and depth 2",
		}, true},
		{"path out of the dataset", func(t *testing.T, dir string) {
			setPreparedEntry(t, dir, "public", "path", "../../../../etc")
		}, []string{
			`prepared_splits["public"].path is "../../../../etc", outside the dataset`,
			"rewrites it as prepared/public",
		}, true},
		{"absolute path", func(t *testing.T, dir string) {
			setPreparedEntry(t, dir, "holdout", "path", "/etc")
		}, []string{`prepared_splits["holdout"].path is "/etc", outside the dataset`}, true},
		{"another format", func(t *testing.T, dir string) {
			setPreparedEntry(t, dir, "holdout", "format", "arrow")
		}, []string{
			`prepared_splits["holdout"] is {"path": "prepared/holdout", "format": "arrow"}, not`,
		}, true},
		{"an extra ghost split", func(t *testing.T, dir string) {
			putFile(t, filepath.Join(dir, PreparedDir, "ghost", prepared.StateFile), []byte("{}"))
		}, []string{`holds ["prepared/ghost"]`, "move them out of the dataset"}, false},
		{"a second shard", func(t *testing.T, dir string) {
			putFile(t, filepath.Join(dir, PreparedDir, "public", "data-00001-of-00002.arrow"), nil)
		}, []string{`holds ["prepared/public/data-00001-of-00002.arrow"]`}, false},
		{"a split folder linked out", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, PreparedDir, "public"))
			symlink(t,
				filepath.Join(other, PreparedDir, "public"),
				filepath.Join(dir, PreparedDir, "public"))
		}, []string{`holds ["prepared/public"]`}, false},
		{"a file linked out", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, arrow("holdout")))
			symlink(t, filepath.Join(clean, arrow("holdout")), filepath.Join(dir, arrow("holdout")))
		}, []string{`holds ["prepared/holdout/data-00000-of-00001.arrow"]`}, false},
		{"prepared/ linked out", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, PreparedDir))
			symlink(t, filepath.Join(clean, PreparedDir), filepath.Join(dir, PreparedDir))
		}, []string{`holds ["prepared"]`}, false},
		{"a tree metadata.json does not list", func(t *testing.T, dir string) {
			editMetadata(t, dir, func(md Metadata) { md.Delete("prepared_splits") })
		}, []string{
			`holds ["prepared/public" "prepared/holdout"]`,
			`prepared_splits lists []`,
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			c.spoil(t, dir)
			schematest.WantErr[*InvalidDatasetError](t, CheckPrepared(dir), c.want...)
			d, err := Open(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			schematest.WantErr[*InvalidDatasetError](t, d.ScanPrepared(nil), c.want...)
			before := treeOf(t, dir)
			err = PrepareArrow(dir)
			if !c.repaired {
				schematest.WantErr[*InvalidDatasetError](t, err,
					"which prepare-arrow did not write", "would delete them")
				if after := treeOf(t, dir); !slices.Equal(before, after) {
					t.Errorf("a refused prepare-arrow changed the dataset:\n%v\n%v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatalf("prepare-arrow: %v", err)
			}
			if err := CheckPrepared(dir); err != nil {
				t.Errorf("after prepare-arrow: %v", err)
			}
		})
	}
}

// A dataset with nothing prepared has nothing to check: a single split, a
// combine with --skip-prepared-arrow, whestbench's fixtures, a directory
// that is no dataset at all (what a Hub download of another repository
// holds); and whestbench's multi-split fixture once prepared.
func TestPreparedCheckAcceptsWhatPrepareArrowWrites(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	dirs := []string{
		writeTestDir(t, parent, "single", testInfo(shape, 3, 0, 0)),
		combineTestSplits(t, filepath.Join(parent, "skipped"), shape, 3, 2, CombineSkipPrepared()),
		filepath.Join(fixtures, "multi_split_v3.0"),
		filepath.Join(fixtures, "single_split_v3_protocol"),
		t.TempDir(),
	}
	prepared := filepath.Join(parent, "fixture")
	copyMultiSplitFixture(t, prepared)
	if err := PrepareArrow(prepared); err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(dirs, prepared) {
		if err := CheckPrepared(dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	// A single split has no prepared tree to list.
	single := dirs[0]
	editMetadata(t, single, func(md Metadata) { md.Set("prepared_splits", NewObject()) })
	schematest.WantErr[*InvalidDatasetError](t, CheckPrepared(single),
		"a single-split dataset has no prepared tree", "remove the key")
}

// The check holds a row, not a split: on a split of 10,000 MLPs (about
// 45 MB of parquet and as much Arrow), the live heap while the rows stream by stays
// within a few MiB of where it started.
func TestPreparedCheckHoldsARow(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 90 MB")
	}
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 16, Depth: 4}
	dir := combineTestSplits(t, parent, shape, 10_000, 1)
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	err = d.ScanPrepared(func(_ *SplitData, r Row) error {
		if r.MLPID%500 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, PreparedDir, "public", prepared.ArrowFile))
	if err != nil {
		t.Fatal(err)
	}
	const bound = 8 << 20
	t.Logf("the live heap grew by %d bytes checking a %d-byte stream",
		int64(peak)-int64(base), st.Size())
	if grew := int64(peak) - int64(base); grew > bound || st.Size() < 5*bound {
		t.Errorf("the live heap grew by %d bytes checking a %d-byte stream (bound %d)",
			grew, st.Size(), bound)
	}
}

func replaceDir(t *testing.T, dst, src string) {
	t.Helper()
	removePath(t, dst)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// flipByteOfRow changes one byte of the last weight of row (of rows of
// equal size after the schema) in split's stream.
func flipByteOfRow(t *testing.T, dir, split string, row int) {
	t.Helper()
	path := filepath.Join(dir, PreparedDir, split, prepared.ArrowFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	header := len(schema.ArrowSchemaMessage(d.Splits[0].Width, d.Splits[0].Depth))
	rows := int(d.Info.Split(split).NMLPs)
	size := (len(data) - header - 8) / rows
	data[header+(row+1)*size-20] ^= 0x40
	putFile(t, path, data)
}

func truncate(t *testing.T, path string, keep float64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(float64(st.Size())*keep)); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func copyOver(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dst, data)
}

func putFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func removePath(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func setPreparedEntry(t *testing.T, dir, split, key, value string) {
	t.Helper()
	editMetadata(t, dir, func(md Metadata) {
		block, _ := md.GetObject("prepared_splits")
		entry, _ := block.GetObject(split)
		entry.Set(key, value)
	})
}

// treeOf lists every path under dir with its size, and the target of
// each symlink, to show a refused verb changed nothing.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := e.Info()
		if err != nil {
			return err
		}
		entry := rel + " " + info.Mode().String()
		if e.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			entry += " → " + target
		} else if !e.IsDir() {
			data, _ := os.ReadFile(p)
			entry += " " + string(data)
		}
		out = append(out, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
