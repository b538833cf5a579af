package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
	"github.com/whestbake/whestbake/dataset/internal/prepared"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
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

// spoilCase is one wrong thing done to a clean dataset's prepared tree,
// the refusal's fragments, and whether prepare-arrow repairs it (else it
// refuses and changes nothing).
type spoilCase struct {
	name     string
	spoil    func(t *testing.T, dir string)
	want     []string
	repaired bool
}

// The hostile dataset, one wrong thing at a time: each passed
// inspect, verify and upload, and whestbench's loader would have read it
// instead of the parquet files, or from outside the dataset. Each is
// refused by CheckPrepared and ScanPrepared with the file named and the
// repair; prepare-arrow repairs what save_to_disk writes, and refuses to
// delete what it did not.
func TestPreparedCheckRefusesHostileTrees(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	clean := combineTestSplits(t, filepath.Join(parent, "clean"), shape, 5, 3)
	other := combineOtherRows(t, filepath.Join(parent, "other"), shape, 5, 3)
	if err := CheckPrepared(clean); err != nil {
		t.Fatalf("a combined dataset: %v", err)
	}
	var cases []spoilCase
	cases = append(cases, hostileStreams(other)...)
	cases = append(cases, hostileStates()...)
	cases = append(cases, hostileFolders(clean, other)...)
	for _, c := range cases {
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

func inPrepared(split, file string) string { return filepath.Join(PreparedDir, split, file) }

func arrowOf(split string) string { return inPrepared(split, prepared.ArrowFile) }

// hostileStreams spoil the Arrow streams: their rows, their ends, the
// lengths their record batches declare.
func hostileStreams(other string) []spoilCase {
	return []spoilCase{
		{"public holds another seed's rows", func(t *testing.T, dir string) {
			replaceDir(t,
				filepath.Join(dir, PreparedDir, "public"),
				filepath.Join(other, PreparedDir, "public"))
		}, []string{
			arrowOf("public") + ": row 0 of split public (row 0 of record batch 0 of this file) " +
				"differs from the rows of data/public-*.parquet: mlp_name differs at byte 4 from the parquet's \"mlp-a\"",
			"prepare-arrow",
		}, true},
		{"a weight of row 2 changed", func(t *testing.T, dir string) {
			editBatch(t, filepath.Join(dir, arrowOf("public")), 2, func(m *batchMessage) {
				m.body[m.buffers[weightValues].Offset+4*5] ^= 0x40
			})
		}, []string{
			arrowOf("public") + ": row 2 of split public (row 0 of record batch 2",
			"weights[5] is",
		}, true},
		{"holdout truncated", func(t *testing.T, dir string) {
			// The last record batch's body loses its last byte, whatever
			// the columns' layout: the end-of-stream marker is 8 bytes.
			path := filepath.Join(dir, arrowOf("holdout"))
			data := readFile(t, path)
			putFile(t, path, data[:len(data)-8-1])
		}, []string{arrowOf("holdout") + ": declares a body of", "it is truncated"}, true},
		{"holdout emptied", func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, arrowOf("holdout")), 0)
		}, []string{arrowOf("holdout") + ": ends at byte 0, in its schema message: it is truncated"}, true},
		{"no end-of-stream marker", func(t *testing.T, dir string) {
			path := filepath.Join(dir, arrowOf("holdout"))
			data := readFile(t, path)
			putFile(t, path, data[:len(data)-8])
		}, []string{arrowOf("holdout") + ": ends at byte", "in record batch 3: it is truncated"}, true},
		{"bytes after the end", func(t *testing.T, dir string) {
			appendBytes(t, filepath.Join(dir, arrowOf("public")),
				[]byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0})
		}, []string{arrowOf("public") + ": goes on after the end of its stream"}, true},
		{"a row missing", func(t *testing.T, dir string) {
			editMessages(t, filepath.Join(dir, arrowOf("public")), func(m [][]byte) [][]byte {
				return slices.Delete(m, len(m)-2, len(m)-1) // the last row
			})
		}, []string{arrowOf("public") + ": ends the split's rows after 4, " +
			"where data/public-*.parquet holds more"}, true},
		{"a row too many", func(t *testing.T, dir string) {
			editMessages(t, filepath.Join(dir, arrowOf("public")), func(m [][]byte) [][]byte {
				return slices.Insert(m, len(m)-1, m[len(m)-2])
			})
		}, []string{arrowOf("public") + ": holds more rows than the 5 of data/public-*.parquet"}, true},
		{"a buffer past the body", func(t *testing.T, dir string) {
			editBatch(t, filepath.Join(dir, arrowOf("public")), 1, func(m *batchMessage) {
				m.buffers[weightValues].Length = 1 << 40
			})
		}, []string{arrowOf("public") + ": record batch 1 (at byte", "declares buffer 14",
			"its lengths run past the file"}, true},
		{"more values than the buffer holds", func(t *testing.T, dir string) {
			editBatch(t, filepath.Join(dir, arrowOf("public")), 0, func(m *batchMessage) {
				m.nodes[6].Length = 1 << 40
			})
		}, []string{"record batch 0 (at byte", "declares 1099511627776 values of weights.item.item.item, " +
			"more than its buffer of 128 bytes holds: its lengths run past the file"}, true},
		{"a row count beyond the columns", func(t *testing.T, dir string) {
			editBatch(t, filepath.Join(dir, arrowOf("public")), 4, func(m *batchMessage) {
				m.length = 1 << 33
			})
		}, []string{"record batch 4 (at byte", "declares 1 values of column mlp_id for its 8589934592 rows"}, true},
		{"a null", func(t *testing.T, dir string) {
			editBatch(t, filepath.Join(dir, arrowOf("holdout")), 1, func(m *batchMessage) {
				m.nodes[12].NullCount = 1
			})
		}, []string{arrowOf("holdout") + ": record batch 1", "holds 1 nulls in avg_variance"}, true},
	}
}

// hostileStates spoil state.json and dataset_info.json.
func hostileStates() []spoilCase {
	state := func(split string) string { return inPrepared(split, prepared.StateFile) }
	datasetInfo := func(split string) string { return inPrepared(split, prepared.InfoFile) }
	setState := func(key string, v any) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, state("public")), func(o *Object) { o.Set(key, v) })
		}
	}
	shardList := func(names ...string) []any {
		var out []any
		for _, n := range names {
			out = append(out, NewObject().Set("filename", n))
		}
		return out
	}
	return []spoilCase{
		{"state.json of another split", func(t *testing.T, dir string) {
			copyOver(t, filepath.Join(dir, state("holdout")), filepath.Join(dir, state("public")))
		}, []string{state("public") + `: has _split "holdout", not "public": it is another split's`}, true},
		{"a subset of the columns", setState("_format_columns", []any{"mlp_id"}), []string{
			state("public") + `: has _format_columns ["mlp_id"] where a dataset with no format has null`,
			"would not return every column as plain values",
		}, true},
		{"a numpy format", setState("_format_type", "numpy"),
			[]string{`has _format_type "numpy" where a dataset with no format has null`}, true},
		{"format arguments", setState("_format_kwargs", NewObject().Set("lazy", true)),
			[]string{`has _format_kwargs {"lazy": true} where a dataset with no format has {}`}, true},
		{"no fingerprint", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, state("public")), func(o *Object) { o.Delete("_fingerprint") })
		}, []string{"has _fingerprint null: a fingerprint is a non-empty string"}, true},
		{"a fingerprint with a path", setState("_fingerprint", "../x"),
			[]string{`has _fingerprint "../x": a fingerprint has none of the characters`}, true},
		{"a shard out of the folder", setState("_data_files", shardList("../x")), []string{
			state("public") + `: lists {"filename": "../x"} as shard 0 of 1, ` +
				`where save_to_disk writes {"filename": "data-00000-of-00001.arrow"}`,
		}, true},
		{"an absolute shard", setState("_data_files", shardList("/etc/passwd")),
			[]string{`lists {"filename": "/etc/passwd"} as shard 0 of 1`}, true},
		{"no shard", setState("_data_files", []any{}), []string{"has no _data_files list of shards"}, true},
		{"an oversized state.json", func(t *testing.T, dir string) {
			padJSON(t, filepath.Join(dir, state("public")), 1<<20+1)
		}, []string{state("public") + ": is larger than 1024 KiB"}, true},
		{"an oversized dataset_info.json", func(t *testing.T, dir string) {
			padJSON(t, filepath.Join(dir, datasetInfo("holdout")), 1<<20+1)
		}, []string{datasetInfo("holdout") + ": is larger than 1024 KiB"}, true},
		{"dataset_info.json of another width", func(t *testing.T, dir string) {
			info, _ := prepared.InfoJSON(8, 2)
			putFile(t, filepath.Join(dir, datasetInfo("public")), info)
		}, []string{
			datasetInfo("public") + `: its features are not those of split "public" ` +
				`(width 4, depth 2): feature weights is Array3D(shape=(2, 8, 8), dtype="float32"), ` +
				`expected Array3D(shape=(2, 4, 4), dtype="float32")`,
		}, true},
		{"dataset_info.json without features", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, datasetInfo("public")), func(o *Object) { o.Delete("features") })
		}, []string{"its features are not those of split", "they are null, not an object of features"}, true},
		{"an avg_variance of float32", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, datasetInfo("public")), func(o *Object) {
				f, _ := o.GetObject("features")
				f.Set("avg_variance", NewObject().Set("dtype", "float").Set("_type", "Value"))
			})
		}, []string{`feature avg_variance is Value("float32"), expected Value("float64")`}, true},
		{"a version DatasetInfo refuses", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, datasetInfo("public")), func(o *Object) { o.Set("version", "1.0") })
		}, []string{`its version "1.0" is not x.y.z, which DatasetInfo.from_dict refuses`}, true},
	}
}

// hostileFolders spoil the folders: paths, shards, other files, symlinks.
func hostileFolders(clean, other string) []spoilCase {
	return []spoilCase{
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
		{"the arrow file missing", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, arrowOf("public")))
		}, []string{arrowOf("public") + ": is missing: state.json lists it as a shard of the split"}, true},
		{"shards swapped in state.json", func(t *testing.T, dir string) {
			reshard(t, dir, "public", 2)
			editJSON(t, filepath.Join(dir, inPrepared("public", prepared.StateFile)), func(o *Object) {
				files, _ := o.GetArray("_data_files")
				slices.Reverse(files)
				o.Set("_data_files", files)
			})
		}, []string{`lists {"filename": "data-00001-of-00002.arrow"} as shard 0 of 2`}, true},
		{"shards swapped in the folder", func(t *testing.T, dir string) {
			reshard(t, dir, "public", 2)
			a := filepath.Join(dir, inPrepared("public", prepared.ShardName(0, 2)))
			b := filepath.Join(dir, inPrepared("public", prepared.ShardName(1, 2)))
			data := readFile(t, a)
			copyOver(t, b, a)
			putFile(t, b, data)
		}, []string{
			inPrepared("public", prepared.ShardName(0, 2)) + ": shard 0 of 2: row 0 of split public " +
				"(row 0 of record batch 0 of this file) differs from the rows of data/public-*.parquet: " +
				"mlp_id is 2 where the parquet's is 0",
		}, true},
		{"a missing shard", func(t *testing.T, dir string) {
			reshard(t, dir, "public", 2)
			removePath(t, filepath.Join(dir, inPrepared("public", prepared.ShardName(1, 2))))
		}, []string{inPrepared("public", prepared.ShardName(1, 2)) + ": is missing"}, true},
		{"a shard state.json does not list", func(t *testing.T, dir string) {
			putFile(t, filepath.Join(dir, inPrepared("public", "data-00001-of-00002.arrow")), nil)
		}, []string{
			inPrepared("public", "data-00001-of-00002.arrow") + ": is not part of the split's " +
				"save_to_disk folder, which holds state.json, dataset_info.json and the 1 shards",
		}, true},
		{"an extra file", func(t *testing.T, dir string) {
			putFile(t, filepath.Join(dir, inPrepared("public", "notes.txt")), []byte("mine"))
		}, []string{`holds ["prepared/public/notes.txt"]`, "move them out of the dataset"}, false},
		{"an extra ghost split", func(t *testing.T, dir string) {
			putFile(t, filepath.Join(dir, PreparedDir, "ghost", prepared.StateFile), []byte("{}"))
		}, []string{`holds ["prepared/ghost"]`, "move them out of the dataset"}, false},
		{"a split folder linked out", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, PreparedDir, "public"))
			symlink(t,
				filepath.Join(other, PreparedDir, "public"),
				filepath.Join(dir, PreparedDir, "public"))
		}, []string{`holds ["prepared/public"]`}, false},
		{"a file linked out", func(t *testing.T, dir string) {
			removePath(t, filepath.Join(dir, arrowOf("holdout")))
			symlink(t, filepath.Join(clean, arrowOf("holdout")), filepath.Join(dir, arrowOf("holdout")))
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
	}
}

// Whoever wrote them, the files save_to_disk writes are checked for what
// load_from_disk reads: a split in several shards, keys of state.json and
// dataset_info.json that load_from_disk does not read or DatasetInfo
// drops, whestbench's dataset_info.json fields, the features in another
// column order or in the older Sequence form, a dtype alias.
func TestPreparedCheckAcceptsWhatLoadFromDiskReadsAlike(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	clean := combineTestSplits(t, t.TempDir(), shape, 5, 3)
	info := func(split string) string { return filepath.Join(clean, inPrepared(split, prepared.InfoFile)) }
	reshard(t, clean, "public", 1, 3)
	editJSON(t, filepath.Join(clean, inPrepared("public", prepared.StateFile)), func(o *Object) {
		o.Set("_fingerprint", "a7b0e3d5c9f1e2d4").Set("_indexes", NewObject())
	})
	editJSON(t, info("public"), func(o *Object) {
		o.Set("builder_name", "parquet").Set("config_name", "default").
			Set("dataset_name", "parquet").Set("dataset_size", 8408).Set("size_in_bytes", 26828).
			Set("version", NewObject().Set("version_str", "0.0.0").Set("major", 0)).
			Set("splits", NewObject().Set("public", NewObject().
				Set("name", "public").Set("num_bytes", 8408).Set("num_examples", 5))).
			Set("download_checksums", NewObject()).Set("a key datasets drops", 1)
		f, _ := o.GetObject("features")
		final, _ := f.Get("final_means")
		f.Delete("final_means")
		f.Set("final_means", final) // last instead of sixth
	})
	editJSON(t, info("holdout"), func(o *Object) {
		f, _ := o.GetObject("features")
		f.Set("final_means", NewObject().
			Set("feature", NewObject().Set("dtype", "float32").Set("_type", "Value")).
			Set("length", 4).Set("_type", "Sequence"))
		f.Set("avg_variance", NewObject().Set("dtype", "double").Set("_type", "Value").Set("id", nil))
	})
	if err := CheckPrepared(clean); err != nil {
		t.Fatal(err)
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

// weightValues is the buffer of a record batch of whestbench's schema that
// holds the weights' values (the columnar format's pre-order layout:
// mlp_id 2 buffers, mlp_name 3, mlp_seed 2, the three lists of weights 2
// each, then its float values' validity bitmap).
const weightValues = 14

// arrowMessages cuts an Arrow IPC stream into its messages: the schema,
// each record batch with its body, the end-of-stream marker.
func arrowMessages(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for off := 0; off < len(data); {
		n := int(int32(binary.LittleEndian.Uint32(data[off+4:])))
		end := off + 8 + n
		if n > 0 {
			m, err := arrowipc.ParseMessage(data[off+8 : end])
			if err != nil {
				t.Fatal(err)
			}
			end += int(m.BodyLength)
		}
		out = append(out, data[off:end:end])
		off = end
	}
	return out
}

// editMessages rewrites the stream at path with its messages edited.
func editMessages(t *testing.T, path string, edit func([][]byte) [][]byte) {
	t.Helper()
	putFile(t, path, bytes.Join(edit(arrowMessages(t, readFile(t, path))), nil))
}

// batchMessage is a record batch message taken apart for editing.
type batchMessage struct {
	length  int64
	nodes   []arrowipc.FieldNode
	buffers []arrowipc.Buffer
	body    []byte
}

// editBatch rewrites record batch i of the stream at path as edit leaves
// it: its field nodes and buffers patched in place in its header (their
// vectors found by their bytes), its length by encoding the header again,
// its body as it is, so that what was not edited keeps its bytes.
func editBatch(t *testing.T, path string, i int, edit func(*batchMessage)) {
	t.Helper()
	editMessages(t, path, func(msgs [][]byte) [][]byte {
		msg := slices.Clone(msgs[1+i])
		n := int(binary.LittleEndian.Uint32(msg[4:]))
		header := msg[8 : 8+n]
		m, err := arrowipc.ParseMessage(header)
		if err != nil {
			t.Fatal(err)
		}
		b := &batchMessage{
			length:  m.Batch.Length,
			nodes:   slices.Clone(m.Batch.Nodes),
			buffers: slices.Clone(m.Batch.Buffers),
			body:    msg[8+n:],
		}
		edit(b)
		patch := func(was, is []byte) {
			if at := bytes.Index(header, was); at < 0 || bytes.Count(header, was) != 1 {
				t.Fatal("a vector of the record batch's header is not where it was")
			} else {
				copy(header[at:], is)
			}
		}
		patch(pairBytes(m.Batch.Nodes), pairBytes(b.nodes))
		patch(pairBytes(m.Batch.Buffers), pairBytes(b.buffers))
		if b.length != m.Batch.Length {
			lens := make([]int64, len(b.buffers))
			for k, bf := range b.buffers {
				lens[k] = bf.Length
			}
			h, _ := arrowipc.RecordBatchMessage(b.length, b.nodes, lens)
			msg = append(h, b.body...)
		}
		msgs[1+i] = msg
		return msgs
	})
}

// pairBytes is a vector's entries as a flatbuffer holds them: two
// little-endian int64 each.
func pairBytes[P arrowipc.FieldNode | arrowipc.Buffer](v []P) []byte {
	out := make([]byte, 0, 16*len(v))
	for _, p := range v {
		var a, b int64
		switch p := any(p).(type) {
		case arrowipc.FieldNode:
			a, b = p.Length, p.NullCount
		case arrowipc.Buffer:
			a, b = p.Offset, p.Length
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(a))
		out = binary.LittleEndian.AppendUint64(out, uint64(b))
	}
	return out
}

// reshard cuts split's one shard into shards of the record batches before
// each cut, between the cuts and after the last, and lists them in
// state.json, as save_to_disk writes a split over its max_shard_size.
func reshard(t *testing.T, dir, split string, cuts ...int) {
	t.Helper()
	folder := filepath.Join(dir, PreparedDir, split)
	msgs := arrowMessages(t, readFile(t, filepath.Join(folder, prepared.ArrowFile)))
	schemaMsg, batches, eos := msgs[0], msgs[1:len(msgs)-1], msgs[len(msgs)-1]
	removePath(t, filepath.Join(folder, prepared.ArrowFile))
	bounds := append(append([]int{0}, cuts...), len(batches))
	var files []any
	for k := range len(bounds) - 1 {
		name := prepared.ShardName(k, len(bounds)-1)
		parts := append(append([][]byte{schemaMsg}, batches[bounds[k]:bounds[k+1]]...), eos)
		putFile(t, filepath.Join(folder, name), bytes.Join(parts, nil))
		files = append(files, NewObject().Set("filename", name))
	}
	editJSON(t, filepath.Join(folder, prepared.StateFile), func(o *Object) { o.Set("_data_files", files) })
}

// editJSON rewrites the JSON object at path with edit applied, as
// save_to_disk writes it (indent=2).
func editJSON(t *testing.T, path string, edit func(*Object)) {
	t.Helper()
	v, err := pyjson.Loads(readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	edit(o)
	data, err := pyjson.Dumps(o, true)
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, path, data)
}

// padJSON pads the JSON file at path with spaces to size bytes: the same
// JSON, larger.
func padJSON(t *testing.T, path string, size int) {
	t.Helper()
	data := readFile(t, path)
	putFile(t, path, append(data, bytes.Repeat([]byte(" "), size-len(data))...))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
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
