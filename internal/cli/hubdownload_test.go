package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// hubWithDataset is a Hub stand-in holding, at alice/gt@v1, the finished
// dataset dir/ds (splits public and holdout, 3 MLPs each, W=8 D=2), which
// upload pushed; HF_TOKEN is unset, so reads go without a token.
func hubWithDataset(t *testing.T) (*hubtest.Server, string) {
	t.Helper()
	srv := hubtest.New(t)
	const token = "hf_cli_dl_token_0a9b8c"
	srv.AddToken(token, "alice", "write")
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	bakeSplits(t, dir, map[string]string{"public": "[1, 2, 3]", "holdout": "[4, 5, 6]"},
		"--n-mlps", "3", "--n-samples", "500", "--width", "8", "--depth", "2")
	mustRun(t, "dataset", "combine-splits", at("public"), at("holdout"), "-o", at("ds"))
	mustRun(t, "dataset", "upload", at("ds"), "--repo", "alice/gt", "--tag", "v1",
		"--endpoint", srv.URL, "--token-file", writeFile(t, at("token"), token))
	t.Setenv("HF_TOKEN", "")
	return srv, dir
}

// A finished dataset goes to the Hub stand-in with upload and comes back
// with download hf://, every file but the re-rendered card byte for byte
// (prepared Arrow splits and report included), without a token for a
// public repository; info reads its metadata.json alone; --split fetches
// one split's files.
func TestHubDownloadAndInfo(t *testing.T) {
	srv, dir := hubWithDataset(t)
	at := func(name string) string { return filepath.Join(dir, name) }

	out := mustRun(t, "dataset", "download", "hf://alice/gt@v1", "--output", at("got"),
		"--endpoint", srv.URL)
	if !strings.Contains(out, "✓ Downloaded hf://alice/gt@v1") ||
		!strings.Contains(out, "Location: "+at("got")) {
		t.Errorf("download output:\n%s", out)
	}
	got := datasettest.ReadTree(t, at("got"))
	want := datasettest.ReadTree(t, at("ds"))
	for p, data := range want {
		if p != "README.md" && !bytes.Equal(got[p], data) {
			t.Errorf("%s differs from the uploaded dataset's", p)
		}
	}
	if _, ok := got["prepared/public/data-00000-of-00001.arrow"]; !ok {
		t.Error("the prepared Arrow splits did not make the round trip")
	}
	if code, out, errs := run(t, "dataset", "compare", at("ds"), at("got")); code != 0 {
		t.Errorf("compare of the dataset and its download: exit %d\n%s%s", code, out, errs)
	}
	// compare takes hf:// too.
	code, cout, errs := run(t, "dataset", "compare", "hf://alice/gt@v1", at("public"),
		"--endpoint", srv.URL)
	if code != 2 || !strings.Contains(errs, "compare needs the same splits") {
		t.Errorf("compare of the Hub dataset with one of its splits: exit %d\n%s%s",
			code, cout, errs)
	}
	code, cout, errs = run(t, "dataset", "compare", "hf://alice/gt@v1", at("ds"),
		"--endpoint", srv.URL)
	if code != 0 || !strings.Contains(cout, "Comparing hf://alice/gt@v1 with "+at("ds")) {
		t.Errorf("compare hf:// with the directory: exit %d\n%s%s", code, cout, errs)
	}
	code, _, errs = run(t, "dataset", "compare", "hf://alice/nope", at("ds"),
		"--endpoint", srv.URL)
	if code != 2 || !strings.Contains(errs, "repo not found or private") {
		t.Errorf("compare of a repository that does not exist: exit %d %s", code, errs)
	}

	out = mustRun(t, "dataset", "info", "hf://alice/gt@v1", "--endpoint", srv.URL)
	for _, w := range []string{
		"WhestBench dataset (multi-split)",
		"  width: 8  depth: 2  n_samples: 500",
		"    holdout:  n_mlps=3  config=default",
		"    public:  n_mlps=3  config=default",
		"prepared_splits: holdout, public",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("info lacks %q:\n%s", w, out)
		}
	}
	if local := mustRun(t, "dataset", "info", at("ds")); local != out {
		t.Errorf("info of the directory and of the Hub differ:\n%s\n%s", local, out)
	}

	mustRun(t, "dataset", "download", "hf://alice/gt@v1", "--split", "holdout", "-o", at("one"),
		"--endpoint", srv.URL)
	var names []string
	for p := range datasettest.ReadTree(t, at("one")) {
		names = append(names, p)
	}
	slices.Sort(names)
	wantFiles := []string{"README.md", "data/holdout-00000-of-00001.parquet", "metadata.json"}
	if !slices.Equal(names, wantFiles) {
		t.Errorf("--split holdout fetched %v", names)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dataset", "download", "hf://alice/gt@v1", "--split", "test",
			"-o", at("x"), "--endpoint", srv.URL}, 1, `--split "test" matched no parquet files`},
		{[]string{"dataset", "download", "hf://alice/gt@v1", "--split", "Bad_Name",
			"-o", at("x"), "--endpoint", srv.URL}, 2, "--split"},
		{[]string{"dataset", "download", "hf://alice", "-o", at("x")}, 2,
			"not a Hub repository id"},
		{[]string{"dataset", "download", "hf://alice/gt@v1", "-o", at("ds"), "--endpoint", srv.URL},
			1, "already exists"},
		{[]string{"dataset", "info", "hf://alice/nope", "--endpoint", srv.URL}, 1,
			"repo not found or private"},
	} {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	if _, err := os.Stat(at("x")); err == nil {
		t.Error("a refused download created its output")
	}
}

// info prints whestbench's summary of its own fixtures: the single-split
// fields present, in its order, and the multi-split form.
func TestInfoOfWhestbenchFixtures(t *testing.T) {
	fx := filepath.Join("..", "..", "testdata", "whestbench-fixtures")
	single := mustRun(t, "dataset", "info", filepath.Join(fx, "single_split_v3_protocol"))
	want := "WhestBench dataset\n" +
		"  schema_version: 3.0\n" +
		"  format: hf-datasets-parquet\n" +
		"  backend: flopscope\n" +
		"  n_mlps: 4\n" +
		"  n_samples: 100\n" +
		"  width: 4\n" +
		"  depth: 2\n" +
		"  created_at_utc: 2026-05-26T00:00:00+00:00\n" +
		"  seed_protocol:  whestbench_explicit_per_mlp_seeds (version 3.0)\n"
	if single != want {
		t.Errorf("single split:\n%s\nwant\n%s", single, want)
	}
	multi := mustRun(t, "dataset", "info", filepath.Join(fx, "multi_split_v3.0"))
	want = "WhestBench dataset (multi-split)\n" +
		"  schema_version: 3.0\n" +
		"  format: hf-datasets-parquet\n" +
		"  backend: flopscope\n" +
		"  width: 4  depth: 2  n_samples: 100\n" +
		"  splits:\n" +
		"    holdout:  n_mlps=4  seed=2\n" +
		"    public:  n_mlps=4  seed=1\n" +
		"  created_at_utc: 2026-05-25T00:00:00+00:00\n"
	if multi != want {
		t.Errorf("multi split:\n%s\nwant\n%s", multi, want)
	}
	for in, want := range map[string]string{
		"100":        "100",
		"1000":       "1,000",
		"1000000000": "1,000,000,000",
		"-12345":     "-12,345",
	} {
		if got := thousands(json.Number(in)); got != want {
			t.Errorf("thousands(%s) = %s, want %s (Python's {:,})", in, got, want)
		}
	}
	code, _, errs := run(t, "dataset", "info", filepath.Join(fx, "nope"))
	if code != 1 || !strings.Contains(errs, "missing metadata.json") {
		t.Errorf("a directory without metadata.json: exit %d %s", code, errs)
	}
}

// compare hf:// fetches what it compares and nothing else: metadata.json,
// the splits' parquet files and the prepared Arrow tree, which whestbench's
// loader reads before them, not the card or the report. The Hub's request log is taken
// by a proxy in front of the stand-in: every file is asked for at its
// resolve URL first. A download that fails (storage serving other bytes
// than the Hub lists, a revision the repository lacks) exits 2, never 1,
// which would say the datasets differ.
func TestCompareHubFetchesOnlyWhatItCompares(t *testing.T) {
	srv, dir := hubWithDataset(t)
	at := func(name string) string { return filepath.Join(dir, name) }

	var mu sync.Mutex
	var fetched []string
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	logged := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, revFile, ok := strings.Cut(r.URL.Path, "/resolve/"); ok {
			_, file, _ := strings.Cut(revFile, "/") // after the commit
			mu.Lock()
			fetched = append(fetched, file)
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	defer logged.Close()

	code, out, errs := run(t, "dataset", "compare", "hf://alice/gt", at("ds"),
		"--endpoint", logged.URL)
	if code != 0 {
		t.Fatalf("compare hf:// with the uploaded directory: exit %d\n%s%s", code, out, errs)
	}
	slices.Sort(fetched)
	want := []string{
		"data/holdout-00000-of-00001.parquet",
		"data/public-00000-of-00001.parquet",
		"metadata.json",
		"prepared/holdout/data-00000-of-00001.arrow",
		"prepared/holdout/dataset_info.json",
		"prepared/holdout/state.json",
		"prepared/public/data-00000-of-00001.arrow",
		"prepared/public/dataset_info.json",
		"prepared/public/state.json",
	}
	if !slices.Equal(fetched, want) {
		t.Errorf("compare fetched %q; want only %q", fetched, want)
	}

	for _, c := range []struct {
		name   string
		src    string
		damage func()
	}{
		{"a revision the repository lacks", "hf://alice/gt@v9", func() {}},
		{"storage serving other bytes", "hf://alice/gt", func() {
			data := readBytes(t, at("ds/data/public-00000-of-00001.parquet"))
			sum := sha256.Sum256(data)
			other := append(data[:len(data)-1:len(data)-1], 'x')
			srv.CorruptLFS("alice/gt", hex.EncodeToString(sum[:]), other)
		}},
	} {
		c.damage()
		for _, args := range [][]string{{c.src, at("ds")}, {at("ds"), c.src}} {
			compareArgs := append([]string{"dataset", "compare", "--endpoint", srv.URL}, args...)
			code, _, errs := run(t, compareArgs...)
			if code != 2 || strings.Contains(errs, "differ") {
				t.Errorf("%s, compare %v: exit %d, %q; want 2 (not compared)",
					c.name, args, code, errs)
			}
		}
	}
}
