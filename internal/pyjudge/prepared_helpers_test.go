package pyjudge

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// combineBaked bakes with whestbake a public split of n1 MLPs and a holdout
// of n2, of width w and depth d, and combines them into parent/out with the
// combine's flags extra.
func combineBaked(t *testing.T, parent string, w, d, n1, n2 int, extra ...string) string {
	t.Helper()
	var dirs []string
	for i, s := range []struct {
		split string
		mlps  int
	}{{"public", n1}, {"holdout", n2}} {
		dir := filepath.Join(parent, s.split)
		whestbake(t, "dataset", "bake", "--n-mlps", strconv.Itoa(s.mlps), "--n-samples", "10",
			"--width", strconv.Itoa(w), "--depth", strconv.Itoa(d), "--seed", strconv.Itoa(7+i),
			"--split", s.split, "--output", dir)
		dirs = append(dirs, dir)
	}
	out := filepath.Join(parent, "out")
	whestbake(t, append(append([]string{"dataset", "combine-splits"}, dirs...),
		append([]string{"--output", out}, extra...)...)...)
	return out
}

// copyTree copies the directory src to dst, which must not exist.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// hfCache keeps datasets' cache in the test's own folder.
func hfCache(t *testing.T) Cmd {
	dir := t.TempDir()
	return Cmd{Env: []string{"HF_HOME=" + dir, "HF_DATASETS_CACHE=" + filepath.Join(dir, "datasets")}}
}

// accepted checks that whestbake's inspect and verify, and
// dataset.CheckPrepared, accept the dataset dir.
func accepted(t *testing.T, dir string) {
	t.Helper()
	whestbake(t, "dataset", "inspect", dir)
	whestbake(t, "dataset", "verify", dir, "--k", "3")
	if err := dataset.CheckPrepared(dir); err != nil {
		t.Errorf("CheckPrepared(%s): %v", dir, err)
	}
}

// refused checks that dataset.CheckPrepared refuses dir with an
// *InvalidDatasetError that says every fragment and the repair, and that
// inspect refuses it too.
func refused(t *testing.T, dir string, fragments ...string) {
	t.Helper()
	err := dataset.CheckPrepared(dir)
	var invalid *dataset.InvalidDatasetError
	if !errors.As(err, &invalid) {
		t.Errorf("%s: CheckPrepared returned %v, want an InvalidDatasetError", filepath.Base(dir), err)
		return
	}
	for _, f := range append(fragments, "prepare-arrow") {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: %q does not say %q", filepath.Base(dir), err, f)
		}
	}
	if _, errs, code := whestbakeRun("dataset", "inspect", dir); code != 1 || !strings.Contains(errs, fragments[0]) {
		t.Errorf("%s: inspect exits %d: %s", filepath.Base(dir), code, errs)
	}
}

// sameRowsPy loads each prepared split of each dataset directory given
// with datasets.load_from_disk and compares its rows with the split's
// parquet rows read by pyarrow, repr for repr (float32 values widen to
// Python floats exactly, and repr tells -0.0 from 0.0); whestbench's
// load_dataset must read the split from the tree, not the parquet files.
// It prints each split's rows, shards and record batches.
const sameRowsPy = `
import glob, json, os, sys
import pyarrow as pa, pyarrow.parquet as pq
import datasets, whestbench
for d in sys.argv[1:]:
    md = json.load(open(os.path.join(d, "metadata.json")))
    for split in md["prepared_splits"]:
        folder = os.path.realpath(os.path.join(d, "prepared", split))
        got = datasets.load_from_disk(folder)
        files = sorted(glob.glob(os.path.join(d, "data", split + "-*.parquet")))
        want = pq.read_table(files)
        if got.column_names != want.column_names:
            sys.exit(f"{folder}: columns {got.column_names}, parquet {want.column_names}")
        if repr(got.data.table.to_pylist()) != repr(want.to_pylist()):
            sys.exit(f"{folder}: load_from_disk's rows are not the parquet's")
        ds = whestbench.load_dataset(d, split=split)
        read = [os.path.realpath(f["filename"]) for f in ds.cache_files]
        if not read or not all(p.startswith(folder + os.sep) for p in read):
            sys.exit(f"{folder}: whestbench's load_dataset read {read}")
        batches = []
        for f in got.cache_files:
            with pa.memory_map(f["filename"]) as m:
                batches.append([b.num_rows for b in pa.ipc.open_stream(m)])
        print(split, got.num_rows, "rows", batches)
`
