package pyjudge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// The trees whestbench writes pass whestbake's check as whestbake's own
// do: whest dataset combine-splits of two splits whest baked, and whest
// dataset prepare-arrow of those splits combined by whestbake without a
// tree. whestbake's prepare-arrow replaces such a tree, which holds only
// save_to_disk's files, with its own.
func TestPreparedTreesWhestbenchWritesPass(t *testing.T) {
	env := Need(t)
	parent := t.TempDir()
	var splits []string
	for _, s := range []struct{ split, mlps string }{{"public", "3"}, {"holdout", "2"}} {
		dir := filepath.Join(parent, s.split)
		env.WhestOK(t, Cmd{}, "dataset", "bake", "--n-mlps", s.mlps, "--n-samples", "100",
			"--width", "4", "--depth", "2", "--split", s.split, "--output", dir)
		splits = append(splits, dir)
	}
	combined := filepath.Join(parent, "combined")
	env.WhestOK(t, hfCache(t), append(append([]string{"dataset", "combine-splits"}, splits...),
		"--output", combined)...)
	prepared := filepath.Join(parent, "prepared")
	whestbake(t, append(append([]string{"dataset", "combine-splits"}, splits...),
		"--output", prepared, "--skip-prepared-arrow")...)
	env.WhestOK(t, hfCache(t), "dataset", "prepare-arrow", prepared)
	for _, dir := range []string{combined, prepared} {
		info, err := os.ReadFile(filepath.Join(dir, dataset.PreparedDir, "public", dataset.PreparedInfoFile))
		if err != nil || !strings.Contains(string(info), `"builder_name": "parquet"`) {
			t.Fatalf("%s: not whestbench's dataset_info.json (%v):\n%s", dir, err, info)
		}
		accepted(t, dir)
	}
	whestbake(t, "dataset", "prepare-arrow", combined)
	info, err := os.ReadFile(filepath.Join(combined, dataset.PreparedDir, "public", dataset.PreparedInfoFile))
	if err != nil || strings.Contains(string(info), "builder_name") {
		t.Errorf("prepare-arrow left whestbench's dataset_info.json (%v):\n%s", err, info)
	}
	accepted(t, combined)
}

// whestbake's own trees load in datasets.load_from_disk with every value
// equal to the parquet's, and whestbench's load_dataset reads them: a
// combine's, and the same tree with what load_from_disk reads alike
// (its features in another column order, final_means as a Sequence,
// avg_variance's dtype as "double", keys DatasetInfo drops or
// load_from_disk does not read), which the check accepts too.
func TestPreparedTreesWhestbakeWritesLoad(t *testing.T) {
	env := Need(t)
	parent := t.TempDir()
	ds := combineBaked(t, parent, 4, 2, 3, 2)
	alike := filepath.Join(parent, "alike")
	copyTree(t, ds, alike)
	env.PythonOK(t, Cmd{}, `
import json, os, sys
folder = os.path.join(sys.argv[1], "prepared", "public")
def edit(name, f):
    p = os.path.join(folder, name)
    doc = json.load(open(p))
    f(doc)
    json.dump(doc, open(p, "w"), indent=2)
def info(doc):
    features = doc["features"]
    features["final_means"]["_type"] = "Sequence"
    features["avg_variance"] = {"dtype": "double", "_type": "Value", "id": None}
    doc["features"] = dict(reversed(features.items()))
    doc["builder_name"] = "parquet"
    doc["version"] = {"version_str": "0.0.0", "major": 0, "minor": 0, "patch": 0}
    doc["splits"] = {"public": {"name": "public", "num_bytes": 1, "num_examples": 3}}
    doc["not a field of DatasetInfo"] = [1, 2]
edit("dataset_info.json", info)
edit("state.json", lambda doc: doc.update(_indexes={}))
`, alike)
	out := env.PythonOK(t, hfCache(t), sameRowsPy, ds, alike).Stdout
	if strings.Count(out, "public 3 rows [[1, 1, 1]]") != 2 ||
		strings.Count(out, "holdout 2 rows [[1, 1]]") != 2 {
		t.Errorf("load_from_disk read:\n%s", out)
	}
	accepted(t, ds)
	accepted(t, alike)
}
