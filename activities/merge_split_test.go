package activities_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
)

// testSlicePartialHasNoCard: a slice's partial is read by its merge only,
// so it holds its parquet file and metadata.json, and no README card.
func testSlicePartialHasNoCard(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, "nocard", 4, 3)
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput("nocard", sd, 1, 1, 2))
	var files []string
	for _, file := range readManifest(t, f.st, out.Prefix).Files {
		files = append(files, file.Path)
	}
	want := []string{"data/public-00000-of-00001.parquet", "metadata.json"}
	if !slices.Equal(files, want) {
		t.Errorf("slice partial holds %q, want %q", files, want)
	}
	if u := usage(t, f, out.Prefix+"/"); u.Objects != 3 {
		t.Errorf(
			"slice partial is %d objects, want 3 (parquet, metadata.json, manifest)",
			u.Objects,
		)
	}
}

// testMergeSplitStreamsManySlices: a split of more one-MLP slices than the
// merge fetches ahead merges to the bytes of a local bake; a slice missing
// in the middle fails the merge as a corrupt input, committing nothing, and
// once it is baked the merge succeeds. Neither attempt leaves scratch files.
func testMergeSplitStreamsManySlices(t *testing.T, f *fixture) {
	const bakeID, n, seed = "many", 20, 5
	scratch := t.TempDir()
	a := &activities.Activities{
		Store:   f.st,
		Engine:  gpuengine.CPU{},
		Threads: 1,
		TempDir: scratch,
	}
	sd := seedSplit(t, a, bakeID, n, seed)
	for k := range n {
		if k != 13 {
			mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, k, k, k+1))
		}
	}
	in := bakeapi.MergeSplitInput{
		BakeID:  bakeID,
		Split:   split,
		NMLPs:   n,
		NSlices: n,
	}
	_, err := run[bakeapi.MergeSplitOutput](a, a.MergeSplit, in)
	app := wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if want := keys.Bake(bakeID).Slice(split, 13); !strings.Contains(app.Error(), want) {
		t.Errorf("error %q does not name the missing slice %s", app.Error(), want)
	}
	if ok, _ := f.st.Exists(
		context.Background(),
		keys.Manifest(keys.Bake(bakeID).Merged(split)),
	); ok {
		t.Fatal("a merge with a missing slice was committed")
	}
	noScratch(t, scratch)
	mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, 13, 13, 14))
	m := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in)
	got := parquetSHA(t, f.st, m.Prefix)
	want := localParquetSHA(t, n, seed, 0, n)
	if m.NMLPs != n || got != want {
		t.Errorf(
			"merged %d MLPs with parquet sha256 %s; want %d and the local bake's %s",
			m.NMLPs,
			got,
			n,
			want,
		)
	}
	noScratch(t, scratch)
}

// noScratch fails if dir holds anything.
func noScratch(t *testing.T, dir string) {
	t.Helper()
	if es, err := os.ReadDir(dir); err != nil || len(es) != 0 {
		t.Errorf("scratch directory holds %v (%v), want nothing", es, err)
	}
}
