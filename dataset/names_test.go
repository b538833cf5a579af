package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// renameSplit renames split from to to in the dataset dir, as a dataset made
// before the split-name rule would have it: its shards and its entry of
// metadata.json (order kept), with no prepared tree.
func renameSplit(t *testing.T, dir, from, to string) {
	t.Helper()
	md, err := ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	splits, _ := md.GetObject("splits")
	renamed := NewObject()
	for _, k := range splits.Keys() {
		v, _ := splits.Get(k)
		if k == from {
			k = to
		}
		renamed.Set(k, v)
	}
	md.Set("splits", renamed)
	if s, _ := md.GetString("default_split"); s == from {
		md.Set("default_split", to)
	}
	md.Delete("prepared_splits")
	data, err := encodeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, PreparedDir)); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, DataDir, shardName(from, 0, 1))
	if err := os.Rename(old, filepath.Join(dir, DataDir, shardName(to, 0, 1))); err != nil {
		t.Fatal(err)
	}
}

// Whatever makes or rewrites a dataset refuses a split name that datasets
// or whestbench cannot load, before it reads a row and leaving nothing: a
// hyphenated split was merged, combined and published, and then could not
// be loaded. A dataset made earlier still opens, so it can be inspected.
func TestProducersRefuseUnloadableSplitNames(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	const want = `split name "mini-a" cannot be loaded`

	parts := bakePartials(t, parent, shape, "mini-a", []int{0, 2, 3}, nil)
	merged := filepath.Join(parent, "merged")
	schematest.WantErr[*InvalidDatasetError](t, Merge(parts, merged, mergedAt), want, `use "minia"`)

	mini := testInfo(shape, 2, 0, 0)
	mini.Split = "mini-a"
	hold := testInfo(shape, 2, 0, 0)
	hold.Split = "holdout"
	hold.Config = "holdout"
	a := writeTestDir(t, parent, "a", mini)
	b := writeTestDir(t, parent, "b", hold)
	combined := filepath.Join(parent, "combined")
	schematest.WantErr[*InvalidDatasetError](t, Combine([]string{b, a}, combined, ""), want)

	// A split that would take the default config from another: with one
	// config for all, every split but the default one is its own config.
	pub := testInfo(shape, 2, 0, 0)
	def := testInfo(shape, 2, 0, 0)
	def.Split = "default"
	p := writeTestDir(t, parent, "p", pub)
	c := writeTestDir(t, parent, "c", def)
	schematest.WantErr[*InvalidDatasetError](t, Combine([]string{p, c}, combined, "public"),
		`split "default" would be the card's config "default", `+
			`which already loads the default split "public"`)

	// A multi-split dataset from before the rule.
	legacy := filepath.Join(parent, "legacy")
	copyMultiSplitFixture(t, legacy)
	renameSplit(t, legacy, "public", "mini-a")
	if _, err := Open(legacy, false); err != nil {
		t.Fatalf("a dataset of whestbench's names no longer opens: %v", err)
	}
	schematest.WantErr[*InvalidDatasetError](t, PrepareArrow(legacy), want)

	for _, out := range []string{merged, combined, filepath.Join(legacy, PreparedDir)} {
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a refused verb left %s (%v)", out, err)
		}
	}
}
