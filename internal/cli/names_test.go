package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// A split named mini-a was baked, combined and published, and then no
// version of datasets or whestbench could load it (datasets' NamedSplit
// refuses '-'). A dataset made so before the rule still opens, for inspect
// and verify, but combine-splits, merge and upload refuse it, saying which
// name would load.
func TestVerbsRefuseSplitNamesDatasetsCannotLoad(t *testing.T) {
	srv := hubtest.New(t)
	const token = "hf_cli_names_token_55"
	srv.AddToken(token, "alice", "write")
	t.Setenv("HF_TOKEN", token)
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	// A split baked as minia, renamed mini-a as an older whestbake named it.
	legacy := func(name string, extra ...string) string {
		out := at(name)
		mustRun(t, append(bakeArgs(out, "--split", "minia", "--seed", "4"), extra...)...)
		old := filepath.Join(out, "data", "minia-00000-of-00001.parquet")
		hyphenated := filepath.Join(out, "data", "mini-a-00000-of-00001.parquet")
		if err := os.Rename(old, hyphenated); err != nil {
			t.Fatal(err)
		}
		md := filepath.Join(out, "metadata.json")
		writeFile(t, md, strings.Replace(string(readBytes(t, md)),
			`"split": "minia"`, `"split": "mini-a"`, 1))
		return out
	}
	whole := legacy("whole")
	parts := []string{legacy("part0", "--slice", "0/2"), legacy("part1", "--slice", "1/2")}
	mustRun(t, bakeArgs(at("holdout"), "--split", "holdout", "--seed", "5")...)

	mustRun(t, "dataset", "inspect", whole)
	mustRun(t, "dataset", "verify", whole, "--k", "1")
	for _, verb := range [][]string{
		{"dataset", "combine-splits", whole, at("holdout"), "--output", at("combined")},
		{"dataset", "merge", parts[0], parts[1], "--output", at("merged")},
		{"dataset", "upload", whole, "--repo", "alice/minia", "--endpoint", srv.URL},
	} {
		code, _, errs := run(t, verb...)
		if code != 1 ||
			!strings.Contains(errs, `split name "mini-a" cannot be loaded`) ||
			!strings.Contains(errs, `use "minia"`) {
			t.Errorf("%s: exit %d, %s", verb[1], code, errs)
		}
	}
	for _, p := range []string{at("combined"), at("merged")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a refused verb created %s", p)
		}
	}
	if exists, _ := srv.Exists("alice/minia"); exists {
		t.Error("a split datasets cannot load reached the Hub")
	}
}
