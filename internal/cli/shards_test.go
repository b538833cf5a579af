package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
	"github.com/whestbake/whestbake/internal/shards"
)

// Every verb takes a dataset whose splits are in shards (two rows a shard
// here, internal/shards): combine-splits, inspect (which lists them),
// verify, prepare-arrow, upload and download hf:// (whole and --split,
// every shard byte for byte) and compare.
func TestEveryVerbTakesSplitsInShards(t *testing.T) {
	t.Cleanup(shards.SetLimit(shards.FileBytes + 2*shards.RowBytes(8, 2)))
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	shape := []string{"--n-samples", "500", "--width", "8", "--depth", "2"}
	bakeSplits(t, dir, map[string]string{"public": "[1, 2, 3, 4, 5]"},
		append([]string{"--n-mlps", "5"}, shape...)...)
	bakeSplits(t, dir, map[string]string{"holdout": "[6, 7, 8]"},
		append([]string{"--n-mlps", "3", "--config", "holdout"}, shape...)...)
	mustRun(t, "dataset", "combine-splits", at("public"), at("holdout"), "-o", at("ds"))
	out := mustRun(t, "dataset", "inspect", at("ds"))
	for _, f := range []string{
		"data/public-00000-of-00003.parquet",
		"data/public-00002-of-00003.parquet",
		"data/holdout-00001-of-00002.parquet",
	} {
		if !strings.Contains(out, f) {
			t.Errorf("inspect does not list %s:\n%s", f, out)
		}
	}
	mustRun(t, "dataset", "verify", at("ds"), "--k", "2")
	before := datasettest.ReadTree(t, at("ds"))
	mustRun(t, "dataset", "prepare-arrow", at("ds"))
	after := datasettest.ReadTree(t, at("ds"))
	for _, p := range []string{
		"prepared/public/data-00000-of-00003.arrow",
		"prepared/public/data-00002-of-00003.arrow",
		"prepared/holdout/data-00001-of-00002.arrow",
		"prepared/holdout/state.json",
	} {
		if len(before[p]) == 0 || !bytes.Equal(before[p], after[p]) {
			t.Errorf("prepare-arrow changed %s (or combine-splits wrote none)", p)
		}
	}

	srv := hubtest.New(t)
	const token = "hf_cli_shards_token_1b2c"
	srv.AddToken(token, "alice", "write")
	mustRun(t, "dataset", "upload", at("ds"), "--repo", "alice/sh", "--tag", "v1",
		"--endpoint", srv.URL, "--token-file", writeFile(t, at("token"), token))
	t.Setenv("HF_TOKEN", "")
	mustRun(t, "dataset", "download", "hf://alice/sh@v1", "-o", at("got"), "--endpoint", srv.URL)
	got := datasettest.ReadTree(t, at("got"))
	for p, data := range after {
		if p != "README.md" && !bytes.Equal(got[p], data) {
			t.Errorf("%s did not make the round trip through the Hub", p)
		}
	}
	if code, out, errs := run(t, "dataset", "compare", at("ds"), at("got")); code != 0 {
		t.Errorf("compare of the dataset and its download: exit %d\n%s%s", code, out, errs)
	}
	mustRun(t, "dataset", "download", "hf://alice/sh@v1", "--split", "public", "-o", at("one"),
		"--endpoint", srv.URL)
	var names []string
	for p := range datasettest.ReadTree(t, at("one")) {
		names = append(names, p)
	}
	slices.Sort(names)
	want := []string{
		"README.md",
		"data/public-00000-of-00003.parquet",
		"data/public-00001-of-00003.parquet",
		"data/public-00002-of-00003.parquet",
		"metadata.json",
	}
	if !slices.Equal(names, want) {
		t.Errorf("--split public fetched %v, want %v", names, want)
	}
}

// A Hub repository that lacks one shard of a split is no dataset: a
// download, whole or of the split, is refused naming the gap, and nothing
// appears at the output. The Hub's listing is not trusted to be complete
// any more than it is trusted to name safe paths.
func TestDownloadRefusesASplitMissingAShard(t *testing.T) {
	t.Cleanup(shards.SetLimit(shards.FileBytes + 2*shards.RowBytes(8, 2)))
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	bakeSplits(t, dir, map[string]string{"public": "[1, 2, 3, 4, 5]"},
		"--n-mlps", "5", "--n-samples", "100", "--width", "8", "--depth", "2")
	srv := hubtest.New(t)
	const token = "hf_cli_gap_token_7d1e"
	srv.AddToken(token, "alice", "write")
	mustRun(t, "dataset", "upload", at("public"), "--repo", "alice/gap",
		"--endpoint", srv.URL, "--token-file", writeFile(t, at("token"), token))
	const missing = "data/public-00001-of-00003.parquet"
	if _, ok := datasettest.ReadTree(t, at("public"))[missing]; !ok {
		t.Fatalf("the bake wrote no %s", missing)
	}
	srv.CommitFiles("alice/gap", "main", "another writer deletes a shard",
		map[string][]byte{missing: nil})
	t.Setenv("HF_TOKEN", "")
	for _, args := range [][]string{nil, {"--split", "public"}} {
		out := at("got" + strings.Join(args, ""))
		code, _, errs := run(t, append([]string{"dataset", "download", "hf://alice/gap",
			"-o", out, "--endpoint", srv.URL}, args...)...)
		if code != 1 || !strings.Contains(errs, "public-00001-of-00003") {
			t.Errorf("download %v of a split missing a shard: exit %d\n%s", args, code, errs)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("download %v left %s behind (%v)", args, out, err)
		}
	}
}
