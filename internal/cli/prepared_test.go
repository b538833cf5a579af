package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// The hostile dataset: prepared/public holding another seed's rows,
// prepared/holdout truncated, an extra prepared/ghost/ and a prepared_splits
// path of ../../../../etc. Every file of it checked out, so inspect, verify
// --k 5 and upload took it, and whestbench's loader would have read the
// tree instead of the parquet files (or from outside the dataset). Each
// wrong thing alone, and all of them, are refused by each verb with the
// file named and the repair, and nothing reaches the Hub; a download of
// such a dataset from the Hub creates nothing.
func TestHostilePreparedTreeIsRefused(t *testing.T) {
	srv := hubtest.New(t)
	const token = "hf_cli_prepared_token_77"
	srv.AddToken(token, "alice", "write")
	t.Setenv("HF_TOKEN", token)
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	combine := func(out, publicSeeds string) {
		for s, seeds := range map[string]string{"public": publicSeeds, "holdout": "[6, 7, 8]"} {
			seedsFile := writeFile(t, at(out+"-"+s+".json"), seeds)
			mustRun(t, "dataset", "bake", "--n-mlps", "3", "--n-samples", "500",
				"--width", "4", "--depth", "2",
				"--mlp-seeds", seedsFile, "--split", s, "-o", at(out+"-"+s))
		}
		mustRun(t, "dataset", "combine-splits", at(out+"-public"), at(out+"-holdout"),
			"-o", at(out))
	}
	combine("ds", "[1, 2, 3]")
	combine("other", "[11, 12, 13]")

	prepared := func(ds string, rel ...string) string {
		return filepath.Join(append([]string{ds, dataset.PreparedDir}, rel...)...)
	}
	spoils := map[string]func(ds string){
		"another seed's rows": func(ds string) {
			for _, f := range []string{"data-00000-of-00001.arrow", "state.json"} {
				theirs := readBytes(t, prepared(at("other"), "public", f))
				writeFile(t, prepared(ds, "public", f), string(theirs))
			}
		},
		"truncated": func(ds string) {
			p := prepared(ds, "holdout", "data-00000-of-00001.arrow")
			writeFile(t, p, string(readBytes(t, p)[:600]))
		},
		"ghost": func(ds string) {
			if err := os.MkdirAll(prepared(ds, "ghost"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, prepared(ds, "ghost", "state.json"), "{}")
		},
		"traversal": func(ds string) {
			md := filepath.Join(ds, dataset.MetadataFile)
			text := strings.Replace(string(readBytes(t, md)),
				`"path": "prepared/public"`, `"path": "../../../../etc"`, 1)
			writeFile(t, md, text)
		},
	}
	for _, c := range []struct {
		spoils []string
		want   []string
	}{
		{[]string{"another seed's rows"}, []string{
			"prepared/public/data-00000-of-00001.arrow: row 0 of split public",
			"differs from the rows of data/public-*.parquet",
			"prepare-arrow",
		}},
		{[]string{"truncated"}, []string{
			"prepared/holdout/data-00000-of-00001.arrow: ends at byte",
			"truncated",
			"prepare-arrow",
		}},
		{[]string{"ghost"}, []string{`holds ["prepared/ghost"]`, "move them out"}},
		{[]string{"traversal"}, []string{
			`prepared_splits["public"].path is "../../../../etc", outside the dataset`,
			"prepare-arrow",
		}},
		{[]string{"another seed's rows", "truncated", "ghost", "traversal"},
			[]string{"outside the dataset"}},
	} {
		name := strings.Join(c.spoils, ", ")
		ds := filepath.Join(t.TempDir(), "hostile")
		if err := os.CopyFS(ds, os.DirFS(at("ds"))); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.spoils {
			spoils[s](ds)
		}
		for _, verb := range [][]string{
			{"dataset", "inspect", ds},
			{"dataset", "verify", ds, "--k", "5"},
			{"dataset", "upload", ds, "--repo", "alice/hostile", "--endpoint", srv.URL},
		} {
			code, _, errs := run(t, verb...)
			if code != 1 {
				t.Errorf("%s: %s exits %d, want 1", name, verb[1], code)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("%s: %s says %q, not %q", name, verb[1], errs, w)
				}
			}
		}
	}
	if exists, _ := srv.Exists("alice/hostile"); exists {
		t.Error("a hostile dataset reached the Hub")
	}

	// One pushed by other means is refused on the way down.
	ds := filepath.Join(t.TempDir(), "pushed")
	if err := os.CopyFS(ds, os.DirFS(at("ds"))); err != nil {
		t.Fatal(err)
	}
	spoils["another seed's rows"](ds)
	c, err := hub.New(srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := hub.DirFiles(ds, dataset.IsDatasetFile)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Push(context.Background(), hub.Options{Repo: "alice/pushed"}, files)
	if err != nil {
		t.Fatal(err)
	}
	got := at("got")
	code, _, errs := run(t, "dataset", "download", "hf://alice/pushed", "--output", got,
		"--endpoint", srv.URL)
	if code != 1 || !strings.Contains(errs, "hf://alice/pushed@main") ||
		!strings.Contains(errs, "prepared/public/data-00000-of-00001.arrow: row 0 of split public") {
		t.Errorf("download of a hostile dataset: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(got); !os.IsNotExist(err) {
		t.Errorf("the refused download created %s (%v)", got, err)
	}
	// --split fetches no prepared tree, and still works.
	mustRun(t, "dataset", "download", "hf://alice/pushed", "--split", "holdout",
		"--output", at("holdout-only"), "--endpoint", srv.URL)
}
