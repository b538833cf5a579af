package workflows_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// localBake is the reference: the same seeds baked on this machine the way
// `whestbake dataset bake --slice k/count` + `merge` + `combine-splits` do it,
// without Temporal or the store. It returns the final dataset directory,
// with its report.
func localBake(t *testing.T, in bakeapi.BakeInput, dir string) string {
	t.Helper()
	ctx := context.Background()
	eng := gpuengine.CPU{}
	var splits []string
	for _, s := range in.Splits {
		list, err := seeds.GenerateInputSeeds(s.NMLPs, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		sf := mlps.FromSeeds(list)
		ids := mlps.Identities(list, seeds.Salt{})
		spec := in.Spec
		var parts []string
		for k, r := range wantSlices(s.NMLPs, in.SliceSize) {
			plan := rows.Plan{
				NMLPs:  s.NMLPs,
				Seeds:  sf,
				Range:  bakeapi.Range{Start: r[0], End: r[1]},
				Spec:   spec,
				Split:  s.Name,
				Config: s.Config,
			}
			if err := plan.Validate(); err != nil {
				t.Fatal(err)
			}
			part := filepath.Join(dir, s.Name+"-part", string(rune('a'+k)))
			if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
				t.Fatal(err)
			}
			md := rows.Metadata(plan, eng.Describe(), time.Now())
			baker := rows.Baker{Engine: eng, Spec: spec, Threads: 2}
			rows := func(write func(dataset.Row) error) error {
				return baker.Stream(ctx, ids, plan.Range, write)
			}
			if err := dataset.WriteDirStream(part, md, spec, rows); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, part)
		}
		merged := filepath.Join(dir, s.Name)
		if err := dataset.Merge(parts, merged, time.Now()); err != nil {
			t.Fatal(err)
		}
		splits = append(splits, merged)
	}
	final := filepath.Join(dir, "dataset")
	if err := report.Combine(splits, final, in.DefaultSplit); err != nil {
		t.Fatal(err)
	}
	return final
}

// download fetches a committed directory (dataset or release) by its
// manifest, checking every sha256, the way `whestbake dataset download` does.
func download(t *testing.T, st *store.Store, prefix, dir string) manifest.Manifest {
	t.Helper()
	ctx := context.Background()
	m, _, err := manifest.Read(ctx, st, prefix)
	if err != nil {
		t.Fatalf("manifest of %s: %v", prefix, err)
	}
	if err := manifest.Fetch(ctx, st, prefix, m, dir); err != nil {
		t.Fatal(err)
	}
	return m
}
