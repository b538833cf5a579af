package workflows_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bake"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/seeds"
	"github.com/whestbake/whestbake/store"
	"github.com/whestbake/whestbake/workflows"
)

// localBake is the reference: the same seeds baked on this machine the way
// `whestbake dataset bake --slice k/count` + `merge` + `combine-splits` do it,
// without Temporal or the store. It returns the final dataset directory.
func localBake(t *testing.T, in workflows.BakeInput, dir string) string {
	t.Helper()
	ctx := context.Background()
	eng := gpuengine.CPU{}
	var splits []string
	for _, s := range in.Splits {
		list, err := seeds.GenerateInputSeeds(s.NMLPs, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		sf := bake.FromSeeds(list)
		ids := bake.Identities(list)
		spec := in.Shape.Spec(1)
		var parts []string
		for k, r := range wantSlices(s.NMLPs, in.SliceSize) {
			plan := bake.Plan{NMLPs: s.NMLPs, Seeds: sf, Range: bake.Range{Start: r[0], End: r[1]}, Spec: spec, Split: s.Name, Config: s.Config}
			if err := plan.Validate(); err != nil {
				t.Fatal(err)
			}
			rows, err := bake.Rows(ctx, eng, spec, ids, plan.Range, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			part := filepath.Join(dir, s.Name+"-part", string(rune('a'+k)))
			if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := dataset.WriteDir(part, bake.Metadata(plan, eng.Describe(), time.Now()), dataset.Shape{Width: spec.Width, Depth: spec.Depth}, rows); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, part)
		}
		merged := filepath.Join(dir, s.Name)
		if err := dataset.Merge(parts, merged); err != nil {
			t.Fatal(err)
		}
		splits = append(splits, merged)
	}
	final := filepath.Join(dir, "dataset")
	if err := dataset.Combine(splits, final, in.DefaultSplit); err != nil {
		t.Fatal(err)
	}
	return final
}

// download fetches a committed directory (dataset or release) by its
// manifest, checking every sha256, the way `whestbake dataset download` does.
func download(t *testing.T, st *store.Store, prefix, dir string) activities.Manifest {
	t.Helper()
	ctx := context.Background()
	data, err := st.Get(ctx, path.Join(prefix, "manifest.json"))
	if err != nil {
		t.Fatalf("manifest of %s: %v", prefix, err)
	}
	var m activities.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		local := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := st.GetFile(ctx, path.Join(prefix, f.Path), local); err != nil {
			t.Fatal(err)
		}
		if sum, err := store.FileSHA256(local); err != nil || sum != f.SHA256 {
			t.Fatalf("%s/%s: sha256 %s (%v), manifest says %s", prefix, f.Path, sum, err, f.SHA256)
		}
	}
	return m
}

// sameParquet fails unless got and want hold the same parquet files with the
// same bytes. metadata.json is left out on purpose: it records the bake's time
// and host.
func sameParquet(t *testing.T, got, want string) {
	t.Helper()
	list := func(dir string) []string {
		names, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range names {
			names[i] = filepath.Base(n)
		}
		return names
	}
	g, w := list(got), list(want)
	if !slices.Equal(g, w) || len(w) == 0 {
		t.Fatalf("parquet files %v, local bake has %v", g, w)
	}
	for _, n := range w {
		a, err := os.ReadFile(filepath.Join(got, "data", n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(want, "data", n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("data/%s differs from the local bake (%d vs %d bytes)", n, len(a), len(b))
		}
	}
}
