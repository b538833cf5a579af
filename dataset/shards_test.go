package dataset

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
	"github.com/whestbake/whestbake/internal/shards"
)

// smallShards lowers the shard limit until the test ends so that a shard
// of shape's rows holds k of them.
func smallShards(t *testing.T, shape bakeapi.Spec, k int64) {
	t.Helper()
	t.Cleanup(shards.SetLimit(shards.FileBytes + k*shards.RowBytes(shape.Width, shape.Depth)))
}

// dataFiles lists dir's data/ folder.
func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	return dirEntries(t, filepath.Join(dir, DataDir))
}

// footerRows is the row count of each parquet file of dir's data/.
func footerRows(t *testing.T, dir string) []int64 {
	t.Helper()
	var out []int64
	for _, f := range dataFiles(t, dir) {
		r, err := OpenParquet(filepath.Join(dir, DataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.NumRows())
		r.Close()
	}
	return out
}

// A split larger than a shard is written in shards of the rows the plan
// gives them (10 rows at 4 a shard: 4, 3 and 3, as datasets'
// Dataset.shard cuts them), each no larger than the limit, read back in
// order; combine copies the shards and writes the prepared folder in
// Arrow shards cut alike, which state.json lists in order and the check
// accepts; prepare-arrow writes the same bytes.
func TestASplitIsWrittenInShards(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	smallShards(t, shape, 4)
	parent := t.TempDir()
	dir := writeTestDir(t, parent, "public", testInfo(shape, 10, 0, 0))
	want := []string{
		"public-00000-of-00003.parquet",
		"public-00001-of-00003.parquet",
		"public-00002-of-00003.parquet",
	}
	if got := dataFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("data/ holds %q, want %q", got, want)
	}
	if got := footerRows(t, dir); !slices.Equal(got, []int64{4, 3, 3}) {
		t.Errorf("the shards hold %v rows, want 4, 3 and 3", got)
	}
	for _, f := range want {
		if st, _ := os.Stat(filepath.Join(dir, DataDir, f)); st.Size() > shards.Limit() {
			t.Errorf("%s is %d bytes, past the limit %d", f, st.Size(), shards.Limit())
		}
	}
	d, err := ReadDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range schematest.Rows(shape, 0, 10) {
		if !schematest.RowsEqual(d.Splits[0].Rows[i], r) {
			t.Errorf("row %d read back differs from the row written", i)
		}
	}

	out := combineTestSplits(t, filepath.Join(parent, "combined"), shape, 10, 5)
	for _, f := range want {
		a, _ := os.ReadFile(filepath.Join(dir, DataDir, f))
		b, _ := os.ReadFile(filepath.Join(out, DataDir, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("combine did not copy %s", f)
		}
	}
	for split, want := range map[string][]string{
		"public":  {"data-00000-of-00003.arrow", "data-00001-of-00003.arrow", "data-00002-of-00003.arrow"},
		"holdout": {"data-00000-of-00002.arrow", "data-00001-of-00002.arrow"},
	} {
		folder := filepath.Join(out, PreparedDir, split)
		if got := dirEntries(t, folder); !slices.Equal(got, append(want, "dataset_info.json",
			"state.json")) {
			t.Errorf("%s holds %q", folder, got)
		}
		if got := stateFiles(t, folder); !slices.Equal(got, want) {
			t.Errorf("%s/state.json lists %q, want %q", folder, got, want)
		}
	}
	if err := CheckPrepared(out); err != nil {
		t.Fatal(err)
	}
	skipped := combineTestSplits(t, filepath.Join(parent, "skipped"), shape, 10, 5,
		CombineSkipPrepared())
	if err := PrepareArrow(skipped); err != nil {
		t.Fatal(err)
	}
	for _, p := range preparedPaths(t, out) {
		a, _ := os.ReadFile(filepath.Join(out, p))
		b, _ := os.ReadFile(filepath.Join(skipped, p))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s of prepare-arrow differs from combine's", p)
		}
	}
}

// stateFiles are the shards a prepared folder's state.json lists.
func stateFiles(t *testing.T, folder string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(folder, PreparedStateFile))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Files []struct {
			Filename string `json:"filename"`
		} `json:"_data_files"`
	}
	if err := json.Unmarshal(data, &state); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range state.Files {
		out = append(out, f.Filename)
	}
	return out
}

// Partials cut anywhere, themselves in shards, merge into the bytes of a
// direct bake of the split, in the shards the split's shape and count
// give; the tee of MergeStream gets each shard's bytes, and is closed once
// each is complete, in order.
func TestMergeOfShardedPartialsIsTheDirectBake(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	smallShards(t, shape, 3)
	parent := t.TempDir()
	parts := bakePartials(t, parent, shape, "public", []int{0, 4, 5, 11}, nil)
	if got := dataFiles(t, parts[2]); len(got) != 2 {
		t.Fatalf("a partial of 6 rows at 3 a shard holds %q", got)
	}
	direct := writeTestDir(t, parent, "direct", testInfo(shape, 11, 0, 0))
	out := filepath.Join(parent, "merged")
	tees := &shardTees{}
	if err := MergeStream(out, mergedAt, inOrder(t, parts, 0, nil), MergeTee(tees.tee)); err != nil {
		t.Fatal(err)
	}
	files := dataFiles(t, direct)
	if got := dataFiles(t, out); len(files) != 4 || !slices.Equal(got, files) {
		t.Fatalf("merged shards %q, the direct bake's %q", got, files)
	}
	for i, f := range files {
		a, _ := os.ReadFile(filepath.Join(out, DataDir, f))
		b, _ := os.ReadFile(filepath.Join(direct, DataDir, f))
		if !bytes.Equal(a, b) {
			t.Errorf("merged %s differs from the direct bake's", f)
		}
		if tee := tees.got[i]; filepath.Base(tee.path) != f || !tee.closed ||
			!bytes.Equal(tee.Bytes(), b) {
			t.Errorf("tee %d had %s (%d bytes, closed %v), want %s", i, tee.path, tee.Len(),
				tee.closed, f)
		}
	}
}

// shardTees records what a ShardTee is handed.
type shardTees struct{ got []*teeShard }

type teeShard struct {
	bytes.Buffer
	path   string
	closed bool
	before *teeShard // the shard handed before, closed by then
}

func (s *shardTees) tee(path string) (io.WriteCloser, error) {
	t := &teeShard{path: path}
	if n := len(s.got); n > 0 {
		t.before = s.got[n-1]
	}
	s.got = append(s.got, t)
	return t, nil
}

func (t *teeShard) Write(p []byte) (int, error) {
	if t.before != nil && !t.before.closed || t.closed {
		return 0, fmt.Errorf("%s written while another shard is open or after its close", t.path)
	}
	return t.Buffer.Write(p)
}

func (t *teeShard) Close() error {
	t.closed = true
	return nil
}

// A split's shards must be one complete, ordered set: a gap, a shard of
// another count or one beyond the count is refused naming it, in a
// dataset and in a partial, whose data/ must hold its split's shards
// alone.
func TestShardSetRefusals(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	smallShards(t, shape, 2)
	for _, c := range []struct {
		name    string
		partial bool
		spoil   func(data string) error
		want    []string
	}{
		{"a gap", false, func(data string) error {
			return os.Remove(filepath.Join(data, "public-00001-of-00003.parquet"))
		}, []string{"missing shard public-00001-of-00003.parquet"}},
		{"mixed totals", false, func(data string) error {
			return os.Rename(filepath.Join(data, "public-00002-of-00003.parquet"),
				filepath.Join(data, "public-00002-of-00004.parquet"))
		}, []string{"mixes shard counts"}},
		{"beyond the count", false, func(data string) error {
			return copyFile(filepath.Join(data, "public-00000-of-00003.parquet"),
				filepath.Join(data, "public-00003-of-00003.parquet"))
		}, []string{"shards beyond its count", "public-00003-of-00003.parquet"}},
		{"another split's shard in a partial", true, func(data string) error {
			return copyFile(filepath.Join(data, "public-00000-of-00003.parquet"),
				filepath.Join(data, "holdout-00000-of-00001.parquet"))
		}, []string{"holds 4 parquet files, of which 3 are the shards", "public"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			info := testInfo(shape, 5, 0, 0)
			if c.partial {
				info = testInfo(shape, 7, 0, 5)
			}
			dir := writeTestDir(t, parent, "ds", info)
			if err := c.spoil(filepath.Join(dir, DataDir)); err != nil {
				t.Fatal(err)
			}
			if c.partial {
				rest := writeTestDir(t, parent, "rest", testInfo(shape, 7, 5, 7))
				err := Merge([]string{dir, rest}, filepath.Join(parent, "out"), mergedAt)
				schematest.WantErr[*InvalidDatasetError](t, err, c.want...)
				return
			}
			_, err := Open(dir, false)
			schematest.WantErr[*InvalidDatasetError](t, err, c.want...)
		})
	}
}

// No shard grows past the limit: rows whose text is longer than a row
// may take fail the write at the shard that outgrew it, naming it, and
// leave nothing; one such row is a shard of its own, as large as it is.
func TestAShardOfRowsOfLongTextIsRefused(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	smallShards(t, shape, 3)
	rows := schematest.Rows(shape, 0, 5)
	for i := range rows {
		// Text no compression shortens: parquet's dictionary and snappy
		// would make little of a repeated letter.
		noise := make([]byte, shards.TextBytes)
		rand.NewChaCha8([32]byte{byte(i)}).Read(noise)
		rows[i].Breakdown = `{"note": "` + hex.EncodeToString(noise) + `"}`
	}
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	info := testInfo(shape, 5, 0, 0)
	err := WriteDir(out, NewBakeMetadata(info), shape, rows)
	schematest.WantErr[*InvalidDatasetError](t, err, "public-00000-of-00002.parquet",
		"past the", "sampling_budget_breakdown")
	if left := dirEntries(t, parent); len(left) != 0 {
		t.Errorf("a refused write left %v", left)
	}
	t.Cleanup(shards.SetLimit(shards.FileBytes + shards.RowBytes(4, 2)))
	if err := WriteDir(out, NewBakeMetadata(info), shape, rows); err != nil {
		t.Errorf("rows of long text a shard each: %v", err)
	}
}

// A split that needs more shards than five digits number is refused
// before anything is written.
func TestASplitOfTooManyShardsIsRefusedFirst(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	smallShards(t, shape, 1)
	md := NewBakeMetadata(testInfo(shape, shards.MaxCount+1, 0, 0))
	out := filepath.Join(t.TempDir(), "out")
	wrote := false
	err := WriteDirStream(out, md, shape, func(func(Row) error) error {
		wrote = true
		return nil
	})
	schematest.WantErr[*InvalidDatasetError](t, err, `split "public"`, "100000 shards")
	if wrote {
		t.Error("rows were produced for a split that cannot be written")
	}
}

// The sizes the plan counts on hold: for shapes from the narrowest to
// rows of a megabyte, with the text whestbake writes, every row takes no
// more than shards.RowBytes in a parquet shard and in an Arrow shard, and
// a shard no more than shards.FileBytes besides its rows.
func TestShardsHoldTheBytesThePlanCountsOn(t *testing.T) {
	for _, s := range []struct{ w, d, n int }{{1, 1, 64}, {4, 2, 100}, {16, 4, 65}, {512, 1, 2}} {
		shape := bakeapi.Spec{Width: s.w, Depth: s.d}
		rows := schematest.Rows(shape, 0, s.n)
		var pq bytes.Buffer
		if err := WriteParquet(&pq, shape, rows); err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		w, err := NewPreparedWriter(root, "x", s.w, s.d, int64(s.n), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if err := w.Write(&rows[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(root, PreparedDir, "x", PreparedArrowFile))
		if err != nil {
			t.Fatal(err)
		}
		bound := shards.FileBytes + int64(s.n)*shards.RowBytes(s.w, s.d)
		for what, size := range map[string]int64{"parquet": int64(pq.Len()), "arrow": st.Size()} {
			t.Logf("%d×%d: %d rows in %d bytes of %s, bound %d", s.w, s.d, s.n, size, what, bound)
			if size > bound {
				t.Errorf("%d rows of %d×%d take %d bytes of %s, past the plan's %d",
					s.n, s.w, s.d, size, what, bound)
			}
		}
	}
}

// Memory stays at a row, not a shard nor a split: merging partials into a
// split of a dozen shards and checking its prepared tree, the live heap
// stays within a few MiB of where it started.
func TestShardedWritersHoldARow(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 65 MB")
	}
	shape := bakeapi.Spec{Width: 16, Depth: 4}
	const n = 3600
	smallShards(t, shape, n/12)
	parent := t.TempDir()
	parts := bakePartials(t, parent, shape, "public", []int{0, 1000, 2500, n}, nil)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	sample := func(r Row) error {
		if r.MLPID%200 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	}
	root := filepath.Join(parent, "made")
	w, err := NewPreparedWriter(root, "public", shape.Width, shape.Depth, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(parent, "merged")
	err = MergeStream(merged, mergedAt, inOrder(t, parts, 0, nil), MergeEachRow(func(r Row) error {
		if err := w.Write(&r); err != nil {
			return err
		}
		return sample(r)
	}))
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPreparedSplit(merged, root); err != nil {
		t.Fatal(err)
	}
	if files := dataFiles(t, merged); len(files) != 12 {
		t.Fatalf("the merged split is %d shards, want 12", len(files))
	}
	arrows, _ := filepath.Glob(filepath.Join(root, PreparedDir, "public", "data-*.arrow"))
	const bound = 8 << 20
	grew := int64(peak) - int64(base)
	t.Logf("the live heap grew by %d bytes writing 12 shards of each format", grew)
	if grew > bound || len(arrows) != 12 {
		t.Errorf("the live heap grew by %d bytes (bound %d) writing %d Arrow shards", grew,
			bound, len(arrows))
	}
}
