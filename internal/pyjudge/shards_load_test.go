package pyjudge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/shards"
)

// shardsOf lowers the shard limit until the test ends, so that a shard
// holds k rows of width 4 and depth 2.
func shardsOf(t *testing.T, k int64) {
	t.Helper()
	t.Cleanup(shards.SetLimit(shards.FileBytes + k*shards.RowBytes(4, 2)))
}

// bakeSplit bakes n MLPs of width 4 and depth 2 of a split (config
// config) into parent/name and returns its path; extra are more flags.
func bakeSplit(t *testing.T, parent, name, split, config string, n, seed int,
	extra ...string,
) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	args := []string{"dataset", "bake", "--n-mlps", strconv.Itoa(n), "--n-samples", "100",
		"--width", "4", "--depth", "2", "--seed", strconv.Itoa(seed), "--split", split,
		"--config", config, "--output", dir}
	whestbake(t, append(args, extra...)...)
	return dir
}

// combineSplits bakes a public split of 7 MLPs and a holdout split of 5,
// and combines them into parent/combined, with the prepared tree.
func combineSplits(t *testing.T, parent string) string {
	t.Helper()
	public := bakeSplit(t, parent, "public", "public", "default", 7, 3)
	holdout := bakeSplit(t, parent, "holdout", "holdout", "holdout", 5, 4)
	out := filepath.Join(parent, "combined")
	whestbake(t, "dataset", "combine-splits", public, holdout, "--output", out)
	return out
}

// loaders reads every split of each pair of a single-split and a combined
// dataset it is given with each loader of whestbench and datasets, and
// prints, as JSON, each reading's rows (every value: the floats as the
// sha256 of their float32s' bytes, avg_variance in hex) and the files it
// read them from.
const loaders = `
import glob, hashlib, json, os, sys
import numpy as np
import datasets, whestbench

def rows(ds):
    out = []
    for r in ds:
        f32 = lambda v: hashlib.sha256(np.asarray(v, dtype=np.float32).tobytes()).hexdigest()
        out.append([r["mlp_id"], r["mlp_name"], r["mlp_seed"], f32(r["weights"]),
            f32(r["all_layer_means"]), f32(r["final_means"]), float(r["avg_variance"]).hex(),
            r["sampling_budget_breakdown"]])
    return out

def files(ds):
    return sorted(os.path.relpath(f["filename"], root) for f in ds.cache_files
        if f["filename"].startswith(root))

def read(single, combined):
    global root
    out = {}
    root = single
    shards = sorted(glob.glob(os.path.join(single, "data", "public-*.parquet")))
    out["single whestbench.load_dataset"] = rows(whestbench.load_dataset(single))
    out["single datasets parquet"] = rows(datasets.load_dataset("parquet",
        data_files={"public": shards}, split="public"))
    root = combined
    for split, config in (("public", "default"), ("holdout", "holdout")):
        ds = whestbench.load_dataset(combined, split=split)
        out[split + " whestbench.load_dataset"] = rows(ds)
        out[split + " whestbench.load_dataset files"] = files(ds)
        ds = datasets.load_from_disk(os.path.join(combined, "prepared", split))
        out[split + " load_from_disk"] = rows(ds)
        out[split + " load_from_disk files"] = files(ds)
        out[split + " card config"] = rows(datasets.load_dataset(combined, config, split=split))
    return out

args = sys.argv[1:]
print(json.dumps([read(args[i], args[i + 1]) for i in range(0, len(args), 2)]))
`

// readings runs loaders on pairs of a single-split and a combined
// dataset, in one Python process.
func readings(t *testing.T, env *Env, pairs ...string) []map[string]json.RawMessage {
	t.Helper()
	cmd := Cmd{Env: []string{
		"HF_HOME=" + t.TempDir(), "HF_DATASETS_OFFLINE=1", "HF_HUB_OFFLINE=1",
	}}
	out := env.PythonOK(t, cmd, loaders, pairs...).Stdout
	var got []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(pairs)/2 {
		t.Fatalf("the loaders printed %q: %v", out, err)
	}
	return got
}

// Every loader reads a split written in shards as it reads the split in
// one file, every value of every row in order: whestbench.load_dataset
// of a single-split directory and of each split of a combined one (from
// the prepared tree, whose Arrow shards load_from_disk reads as state.json
// lists them), datasets' parquet loader given the shards, and
// load_dataset of the directory by its card's configs. whest dataset info
// reads the sharded dataset as the other.
func TestLoadersReadShardedSplitsAsOneFileSplits(t *testing.T) {
	env := Need(t)
	parent := t.TempDir()
	whole := filepath.Join(parent, "whole")
	wholeCombined := combineSplits(t, whole)
	shardsOf(t, 3)
	sharded := filepath.Join(parent, "sharded")
	shardedCombined := combineSplits(t, sharded)
	for dir, want := range map[string][]string{
		filepath.Join(sharded, "public", "data"): {
			"public-00000-of-00003.parquet",
			"public-00001-of-00003.parquet",
			"public-00002-of-00003.parquet",
		},
		filepath.Join(shardedCombined, "prepared", "holdout"): {
			"data-00000-of-00002.arrow",
			"data-00001-of-00002.arrow",
			"dataset_info.json",
			"state.json",
		},
	} {
		if got := names(t, dir); !slices.Equal(got, want) {
			t.Fatalf("%s holds %q, want %q", dir, got, want)
		}
	}
	read := readings(t, env, filepath.Join(whole, "public"), wholeCombined,
		filepath.Join(sharded, "public"), shardedCombined)
	want, got := read[0], read[1]
	for k, w := range want {
		if strings.HasSuffix(k, " files") {
			continue
		}
		if string(got[k]) != string(w) {
			t.Errorf("%s of the sharded dataset:\n%s\nof the one-file dataset:\n%s", k, got[k], w)
		}
	}
	var n []json.RawMessage
	if err := json.Unmarshal(got["public load_from_disk"], &n); err != nil || len(n) != 7 {
		t.Errorf("load_from_disk read %d rows of public (%v), want 7", len(n), err)
	}
	// whestbench took the prepared tree, all of it.
	for k, w := range map[string]string{
		"public whestbench.load_dataset files": `["prepared/public/data-00000-of-00003.arrow", ` +
			`"prepared/public/data-00001-of-00003.arrow", "prepared/public/data-00002-of-00003.arrow"]`,
		"holdout load_from_disk files": `["prepared/holdout/data-00000-of-00002.arrow", ` +
			`"prepared/holdout/data-00001-of-00002.arrow"]`,
	} {
		var a, b []string
		if json.Unmarshal(got[k], &a) != nil || json.Unmarshal([]byte(w), &b) != nil ||
			!slices.Equal(a, b) {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	info := env.WhestOK(t, Cmd{}, "dataset", "info", filepath.Join(sharded, "public")).Stdout
	if !strings.Contains(info, "n_mlps: 7") {
		t.Errorf("whest dataset info of the sharded split:\n%s", info)
	}
}

// names lists dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// whestbench merges and combines splits of one parquet file only: its
// merge_datasets and combine_split_datasets count the files of data/.
// Partials in shards and a split in shards are whestbake's verbs' to
// merge and combine, and what whestbake merges is the bake it would have
// made unsliced, byte for byte.
func TestWhestbenchMergesAndCombinesOneFileSplitsOnly(t *testing.T) {
	env := Need(t)
	shardsOf(t, 2)
	parent := t.TempDir()
	var parts []string
	for k := range 2 {
		name := "part" + strconv.Itoa(k)
		parts = append(parts, bakeSplit(t, parent, name, "public", "default", 8, 5,
			"--slice", strconv.Itoa(k)+"/2"))
		if got := names(t, filepath.Join(parent, name, "data")); len(got) != 2 {
			t.Fatalf("a partial of 4 rows at 2 a shard holds %q", got)
		}
	}
	merged := filepath.Join(parent, "merged")
	whestbake(t, append(append([]string{"dataset", "merge"}, parts...), "--output", merged)...)
	direct := bakeSplit(t, parent, "direct", "public", "default", 8, 5)
	for _, f := range names(t, filepath.Join(direct, "data")) {
		a, _ := os.ReadFile(filepath.Join(merged, "data", f))
		b, _ := os.ReadFile(filepath.Join(direct, "data", f))
		if len(b) == 0 || string(a) != string(b) {
			t.Errorf("merged data/%s differs from the unsliced bake's", f)
		}
	}
	r := env.WhestRun(t, Cmd{}, append(append([]string{"dataset", "merge"}, parts...),
		"--output", filepath.Join(parent, "whest-merged"))...)
	if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "has 2 parquet files; expected 1") {
		t.Errorf("whest dataset merge of partials in shards: exit %d\n%s%s", r.Code, r.Stdout,
			r.Stderr)
	}
	holdout := bakeSplit(t, parent, "holdout", "holdout", "holdout", 1, 6)
	r = env.WhestRun(t, Cmd{}, "dataset", "combine-splits", merged, holdout,
		"--output", filepath.Join(parent, "whest-combined"))
	if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "expected exactly one parquet file") {
		t.Errorf("whest dataset combine-splits of a split in shards: exit %d\n%s%s", r.Code,
			r.Stdout, r.Stderr)
	}
}
