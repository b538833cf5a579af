package pyjudge

import (
	"path/filepath"
	"strings"
	"testing"
)

// saveToDiskPy replaces a split's prepared folder with the one
// Dataset.save_to_disk writes of its parquet files, in record batches of
// at most argv[3] rows (datasets' DEFAULT_MAX_BATCH_SIZE, 1,000, set
// lower) and shards of at most argv[4] bytes (max_shard_size).
const saveToDiskPy = `
import glob, os, shutil, sys
import datasets
d, split, batch, shard = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
datasets.config.DEFAULT_MAX_BATCH_SIZE = batch
files = sorted(glob.glob(os.path.join(d, "data", split + "-*.parquet")))
ds = datasets.Dataset.from_parquet(files, split=datasets.NamedSplit(split))
out = os.path.join(d, "prepared", split)
shutil.rmtree(out)
ds.save_to_disk(out, max_shard_size=shard)
`

// tamperPy copies the dataset argv[1], whose public split is three shards
// of record batches of five rows, into a folder of argv[2] a fault at a
// time, each written by pyarrow (ipc.new_stream) where it is a stream's.
const tamperPy = `
import json, os, shutil, sys
import numpy as np, pyarrow as pa, pyarrow.compute as pc
src, out = sys.argv[1], sys.argv[2]
def shard(d, i):
    return os.path.join(d, "prepared", "public", f"data-{i:05d}-of-00003.arrow")
def read(p):  # into memory, not mapped: the file is written over next
    with open(p, "rb") as f:
        r = pa.ipc.open_stream(f.read())
        return r.schema, list(r)
def write(p, schema, batches, **options):
    with pa.OSFile(p, "wb") as f:
        with pa.ipc.new_stream(f, schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
            for b in batches:
                w.write_batch(b)
def changed_weight(d):
    schema, batches = read(shard(d, 2))
    b = batches[0]
    weights = b.column("weights")  # its extension type is datasets', not imported here
    lists = [weights, weights.values, weights.values.values]
    values = lists[2].values.to_numpy().copy()
    at = 3 * 32 + 7  # row 3's weights[7]: 32 weights a row at W=4, D=2
    values[at] = np.nextafter(values[at], np.float32(np.inf))
    rebuilt = pa.array(values, pa.float32())
    for level in reversed(lists):
        rebuilt = pa.ListArray.from_arrays(level.offsets, rebuilt)
    columns = list(b.columns)
    columns[3] = rebuilt
    batches[0] = pa.RecordBatch.from_arrays(columns, schema=schema)
    write(shard(d, 2), schema, batches)
def compressed(d):
    schema, batches = read(shard(d, 1))
    write(shard(d, 1), schema, batches, compression="zstd")
def dictionary(d):
    schema, batches = read(shard(d, 0))
    t = pa.Table.from_batches(batches)
    t = t.set_column(1, "mlp_name", pc.dictionary_encode(t.column("mlp_name"))).unify_dictionaries()
    write(shard(d, 0), t.schema, t.to_batches(max_chunksize=5))
def null(d):
    schema, batches = read(shard(d, 0))
    b = batches[1]
    variance = b.column("avg_variance").to_pylist()
    variance[1] = None
    columns = list(b.columns)
    columns[6] = pa.array(variance, pa.float64())
    batches[1] = pa.RecordBatch.from_arrays(columns, schema=schema)
    write(shard(d, 0), schema, batches)
def truncated(d):
    os.truncate(shard(d, 2), os.path.getsize(shard(d, 2)) // 2)
def after_the_end(d):
    with open(shard(d, 1), "ab") as f:
        f.write(b"\xff\xff\xff\xff\x00\x00\x00\x00")
def swapped(d):
    p = os.path.join(d, "prepared", "public", "state.json")
    state = json.load(open(p))
    state["_data_files"].reverse()
    json.dump(state, open(p, "w"), indent=2, sort_keys=True)
def missing(d):
    os.remove(shard(d, 1))
for f in [changed_weight, compressed, dictionary, null, truncated, after_the_end, swapped, missing]:
    d = os.path.join(out, f.__name__)
    shutil.copytree(src, d)
    f(d)
`

// A split save_to_disk writes in several shards of record batches of many
// rows passes the check as load_from_disk reads it, and each fault pyarrow
// writes into such a tree is refused, with the file, the shard and what
// is wrong: one float changed in a multi-row batch of a later shard, a
// compressed batch, a dictionary-encoded column, a null, a truncated
// shard, bytes after the end of a stream, shards swapped in state.json, a
// missing shard.
func TestPreparedSaveToDiskShardsOfManyRowBatches(t *testing.T) {
	env := Need(t)
	parent := t.TempDir()
	ds := combineBaked(t, parent, 4, 2, 24, 5)
	env.PythonOK(t, hfCache(t), saveToDiskPy, ds, "public", "5", "25000")
	if out := env.PythonOK(t, hfCache(t), sameRowsPy, ds).Stdout; !strings.Contains(out,
		"public 24 rows [[5, 3], [5, 3], [5, 3]]") {
		t.Fatalf("save_to_disk did not write three shards of two batches:\n%s", out)
	}
	accepted(t, ds)

	tampered := filepath.Join(parent, "tampered")
	env.PythonOK(t, Cmd{}, tamperPy, ds, tampered)
	shard := func(i int) string {
		return filepath.Join("prepared", "public", "data-0000"+string(rune('0'+i))+"-of-00003.arrow")
	}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"changed_weight", []string{
			shard(2) + ": shard 2 of 3: row 19 of split public (row 3 of record batch 0 of this file) " +
				"differs from the rows of data/public-*.parquet: weights[7] is",
		}},
		{"compressed", []string{shard(1) + ": shard 1 of 3: record batch 0 (at byte", "is compressed"}},
		{"dictionary", []string{shard(0) + ": shard 0 of 3: its schema message at byte 0 " +
			`does not decode: field "mlp_name" is dictionary-encoded`}},
		{"null", []string{shard(0) + ": shard 0 of 3: record batch 1 (at byte",
			"holds 1 nulls in avg_variance"}},
		{"truncated", []string{shard(2) + ": shard 2 of 3:", "it is truncated"}},
		{"after_the_end", []string{shard(1) + ": shard 1 of 3: goes on after the end of its stream"}},
		{"swapped", []string{`state.json: lists {"filename": "data-00002-of-00003.arrow"} as shard 0 of 3`}},
		{"missing", []string{shard(1) + ": is missing: state.json lists it as a shard of the split"}},
	} {
		refused(t, filepath.Join(tampered, c.name), c.want...)
	}
}
