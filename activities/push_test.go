package activities_test

import (
	"bytes"
	"context"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
)

// bakeDataset runs a one-split bake through the real activities: seeds, two
// slices, merge, combine. It returns the committed final dataset.
func bakeDataset(t *testing.T, f *fixture, bakeID string, seed uint64) bakeapi.CombineSplitsOutput {
	t.Helper()
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, bakeID, 3, seed)
	for k, r := range [][2]int{{0, 1}, {1, 3}} {
		out := mustRun[bakeapi.BakeSliceOutput](
			t,
			a,
			a.BakeSlice,
			sliceInput(bakeID, sd, k, r[0], r[1]),
		)
		if out.Prefix != keys.Bake(bakeID).Slice(split, k) {
			t.Fatalf(
				"slice %d committed at %s, want its key %s: MergeSplit finds slices by key",
				k,
				out.Prefix,
				keys.Bake(bakeID).Slice(split, k),
			)
		}
	}
	m := mustRun[bakeapi.MergeSplitOutput](
		t,
		a,
		a.MergeSplit,
		bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: 3, NSlices: 2},
	)
	if m.NMLPs != 3 || m.Prefix != keys.Bake(bakeID).Merged(split) {
		t.Fatalf("merge: %+v, want 3 MLPs at %s", m, keys.Bake(bakeID).Merged(split))
	}
	return mustRun[bakeapi.CombineSplitsOutput](
		t,
		a,
		a.CombineSplits,
		bakeapi.CombineSplitsInput{BakeID: bakeID, Splits: []string{m.Prefix}},
	)
}

func testPushIsImmutable(t *testing.T, f *fixture) {
	ctx := context.Background()
	first := bakeDataset(t, f, "push-a", 1)
	other := bakeDataset(t, f, "push-b", 2)
	a := f.acts(gpuengine.CPU{})
	in := releaseInput(f, first.Prefix, "demo", "v1")
	rel := keys.Release("datasets", "demo", "v1")

	pushed := mustRun[bakeapi.PushOutput](t, a, a.Push, in)
	if want := "s3://" + f.bucket + "/" + rel + "/"; pushed.URI != want ||
		pushed.ManifestSHA256 != first.ManifestSHA256 {
		t.Fatalf("push: %+v, want %s with manifest %s", pushed, want, first.ManifestSHA256)
	}
	manifest, err := f.st.Get(ctx, keys.Manifest(rel))
	if err != nil {
		t.Fatal(err)
	}
	// Every file the manifest lists was copied with its bytes; the report
	// is part of the dataset (CombineSplits wrote it), so it is listed.
	m := readManifest(t, f.st, first.Prefix)
	listed := map[string]bool{}
	for _, file := range m.Files {
		listed[file.Path] = true
	}
	for _, fig := range dataset.ReportFigures {
		if !listed[dataset.ReportDir+"/"+fig.File] ||
			!listed[dataset.ReportDir+"/"+dataset.ReportPage] {
			t.Errorf(
				"the dataset's manifest does not list %s/%s and %s/%s: %+v",
				dataset.ReportDir,
				fig.File,
				dataset.ReportDir,
				dataset.ReportPage,
				m.Files,
			)
		}
	}
	for _, file := range m.Files {
		info, err := f.st.Stat(ctx, path.Join(rel, file.Path))
		if err != nil || info.SHA256 != file.SHA256 {
			t.Errorf("release %s: %+v (%v), want sha256 %s", file.Path, info, err, file.SHA256)
		}
	}

	// The identical release again: accepted, nothing changes.
	again := mustRun[bakeapi.PushOutput](t, a, a.Push, in)
	if again != pushed {
		t.Errorf("re-push: %+v, want %+v", again, pushed)
	}

	// Different content at the same tag: refused, the release untouched.
	in.DatasetPrefix = other.Prefix
	_, err = run[bakeapi.PushOutput](a, a.Push, in)
	wantAppError(t, err, bakeapi.ErrDestinationConflict)
	if after, _ := f.st.Get(ctx, keys.Manifest(rel)); string(after) != string(manifest) {
		t.Error("a refused push changed the release's manifest")
	}

	// The other dataset under its own tag is fine.
	in.Tag = "v2"
	mustRun[bakeapi.PushOutput](t, a, a.Push, in)
}

// testPushRefusesLeftoverFromAnotherRelease: a data file left at the tag by
// an interrupted push of different content is a conflict, and the release
// never becomes visible (no manifest).
func testPushRefusesLeftoverFromAnotherRelease(t *testing.T, f *fixture) {
	ds := bakeDataset(t, f, "leftover", 3)
	a := f.acts(gpuengine.CPU{})
	rel := keys.Release("datasets", "demo", "v3")
	m := readManifest(t, f.st, ds.Prefix)
	i := slices.IndexFunc(
		m.Files,
		func(f manifest.File) bool { return strings.HasPrefix(f.Path, "data/") },
	)
	if err := f.st.Put(
		context.Background(),
		path.Join(rel, m.Files[i].Path),
		[]byte("someone else's bytes"),
	); err != nil {
		t.Fatal(err)
	}
	_, err := run[bakeapi.PushOutput](a, a.Push, releaseInput(f, ds.Prefix, "demo", "v3"))
	wantAppError(t, err, bakeapi.ErrDestinationConflict)
	if ok, _ := f.st.Exists(context.Background(), keys.Manifest(rel)); ok {
		t.Error("the conflicting release was made visible")
	}
}

// testPushRefusesADatasetFileUnlikeItsManifest: a dataset file replaced
// after its directory was committed is never released; the release stays
// invisible and holds no copy of it.
func testPushRefusesADatasetFileUnlikeItsManifest(t *testing.T, f *fixture) {
	ds := bakeDataset(t, f, "replaced", 5)
	a := f.acts(gpuengine.CPU{})
	m := readManifest(t, f.st, ds.Prefix)
	file := m.Files[len(m.Files)-1].Path
	if err := f.st.Put(
		context.Background(),
		path.Join(ds.Prefix, file),
		[]byte("replaced bytes"),
	); err != nil {
		t.Fatal(err)
	}
	_, err := run[bakeapi.PushOutput](a, a.Push, releaseInput(f, ds.Prefix, "demo", "v5"))
	wantAppError(t, err, bakeapi.ErrCorruptPartial)
	rel := keys.Release("datasets", "demo", "v5")
	for _, key := range []string{keys.Manifest(rel), path.Join(rel, file)} {
		if ok, _ := f.st.Exists(context.Background(), key); ok {
			t.Errorf("the refused push wrote %s", key)
		}
	}
}

// testPushFailsAtOnceOnAFileRewrittenUnderItsRecordedSHA256: a dataset
// file whose bytes changed in the bucket while its recorded sha256 (S3
// metadata) was kept, as a restore that copies metadata would leave it, is
// read twice and then refused for good, naming the file: a retried attempt
// would read the same bytes, so the attempts would only run out.
func testPushFailsAtOnceOnAFileRewrittenUnderItsRecordedSHA256(t *testing.T, f *fixture) {
	ds := bakeDataset(t, f, "rewritten", 5)
	a := f.acts(gpuengine.CPU{})
	m := readManifest(t, f.st, ds.Prefix)
	file := m.Files[len(m.Files)-1]
	putKeepingRecordedSHA256(
		t,
		f,
		path.Join(ds.Prefix, file.Path),
		bytes.Repeat([]byte{'x'}, int(file.Size)),
	)
	_, err := run[bakeapi.PushOutput](a, a.Push, releaseInput(f, ds.Prefix, "demo", "v6"))
	app := wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if !strings.Contains(app.Error(), file.Path) {
		t.Errorf("error %q does not name the file %s", app.Error(), file.Path)
	}
	if ok, _ := f.st.Exists(
		context.Background(),
		path.Join(keys.Release("datasets", "demo", "v6"), file.Path),
	); ok {
		t.Error("the refused push wrote the damaged file")
	}
}

func testPushToMissingBucketIsPermanent(t *testing.T, f *fixture) {
	ds := bakeDataset(t, f, "nobucket", 4)
	a := f.acts(gpuengine.CPU{})
	_, err := run[bakeapi.PushOutput](
		a,
		a.Push,
		bakeapi.PushInput{
			DatasetPrefix: ds.Prefix,
			Bucket:        "no-such-bucket",
			Prefix:        "datasets",
			Name:          "demo",
			Tag:           "v1",
		},
	)
	app := wantAppError(t, err, bakeapi.ErrStoreAccess)
	if !strings.Contains(app.Error(), "no-such-bucket") {
		t.Errorf("error %q does not name the bucket", app.Error())
	}
}

// testMergeSplitFailsAtOnceOnADamagedPartial: a slice partial's parquet
// file rewritten after its commit (S3 metadata matching the new bytes) is
// not what its manifest lists; reading it again returns the same bytes, so
// the merge fails non-retryably, naming the file, instead of being retried
// until its attempts run out.
func testMergeSplitFailsAtOnceOnADamagedPartial(t *testing.T, f *fixture) {
	ctx := context.Background()
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, "damaged-part", 3, 8)
	var parquet string
	for k, r := range [][2]int{{0, 1}, {1, 3}} {
		out := mustRun[bakeapi.BakeSliceOutput](
			t,
			a,
			a.BakeSlice,
			sliceInput("damaged-part", sd, k, r[0], r[1]),
		)
		if k == 1 {
			for _, file := range readManifest(t, f.st, out.Prefix).Files {
				if strings.HasSuffix(file.Path, ".parquet") {
					parquet = path.Join(out.Prefix, file.Path)
				}
			}
		}
	}
	data, err := f.st.Get(ctx, parquet)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := f.st.Put(ctx, parquet, data); err != nil {
		t.Fatal(err)
	}
	_, err = run[bakeapi.MergeSplitOutput](
		a,
		a.MergeSplit,
		bakeapi.MergeSplitInput{
			BakeID:            "damaged-part",
			Split:             split,
			NMLPs:             3,
			NSlices:           2,
			KeepIntermediates: true,
		},
	)
	app := wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if !strings.Contains(app.Error(), parquet) ||
		!strings.Contains(app.Error(), "whestbake bake --id damaged-part") {
		t.Errorf("merge of a damaged partial: %v, want a refusal naming %s and the restart",
			app, parquet)
	}
	if ok, _ := f.st.Exists(ctx, keys.Manifest(keys.Bake("damaged-part").Merged(split))); ok {
		t.Error("a merge of a damaged partial was committed")
	}
	// The restart heals it: the slice, whose commit the merge discarded,
	// commits its partial again from its results, and the merge goes on.
	if ok, _ := f.st.Exists(ctx, keys.Manifest(keys.Bake("damaged-part").Slice(split, 1))); ok {
		t.Fatal("the merge kept the commit of the damaged partial")
	}
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput("damaged-part", sd, 1, 1, 3))
	if out.Reused != 2 || out.Computed != 0 {
		t.Errorf("the restart's slice: %+v, want its 2 stored results reused", out)
	}
	mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, bakeapi.MergeSplitInput{
		BakeID:            "damaged-part",
		Split:             split,
		NMLPs:             3,
		NSlices:           2,
		KeepIntermediates: true,
	})
	if got, want := mergedShardSHA(t, f, "damaged-part"), localParquetSHA(t, 3, 8, 0, 3); got != want {
		t.Errorf("the healed merge has sha256 %s, the local bake's %s", got, want)
	}
}

// testAnotherBakesDatasetIsNeverThisBakes: a release may not point into
// the bakes' folder (Push refuses it before writing), and a dataset
// manifest that another bake committed, found at this bake's key, is never
// taken for this bake's commit: CombineSplits fails, naming it, instead of
// publishing the other bake's rows.
func testAnotherBakesDatasetIsNeverThisBakes(t *testing.T, f *fixture) {
	ctx := context.Background()
	attacker := bakeDataset(t, f, "attacker", 1)
	a := f.acts(gpuengine.CPU{})
	victim := keys.Bake("victim")
	_, err := run[bakeapi.PushOutput](
		a,
		a.Push,
		bakeapi.PushInput{
			DatasetPrefix: attacker.Prefix,
			Bucket:        f.bucket,
			Prefix:        "bakes",
			Name:          "victim",
			Tag:           "dataset",
		},
	)
	app := wantAppError(t, err, bakeapi.ErrInvalidConfig)
	if !strings.Contains(app.Error(), "inside bakes/") {
		t.Errorf("push into a bake's folder: %v, want a refusal that says why", app)
	}
	if ok, _ := f.st.Exists(ctx, keys.Manifest(victim.Dataset())); ok {
		t.Fatal("the refused push wrote the victim's dataset manifest")
	}

	// The victim's split, merged; then the attacker's manifest lands at its
	// dataset key (an older release's Push, or any tool).
	sd := seedSplit(t, a, "victim", 3, 2)
	mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput("victim", sd, 0, 0, 3))
	merged := mustRun[bakeapi.MergeSplitOutput](
		t,
		a,
		a.MergeSplit,
		bakeapi.MergeSplitInput{BakeID: "victim", Split: split, NMLPs: 3, NSlices: 1},
	)
	planted, err := f.st.Get(ctx, keys.Manifest(attacker.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.PutCreate(ctx, keys.Manifest(victim.Dataset()), planted); err != nil {
		t.Fatal(err)
	}
	_, err = run[bakeapi.CombineSplitsOutput](
		a,
		a.CombineSplits,
		bakeapi.CombineSplitsInput{BakeID: "victim", Splits: []string{merged.Prefix}},
	)
	app = wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if !strings.Contains(app.Error(), keys.Manifest(victim.Dataset())) ||
		!strings.Contains(app.Error(), "bakes/attacker/") {
		t.Errorf(
			"CombineSplits on another bake's manifest: "+
				"%v, want a refusal naming the object and its producer",
			app,
		)
	}
	// Push of the victim's dataset (a workflow that got past CombineSplits) refuses it too.
	_, err = run[bakeapi.PushOutput](a, a.Push, releaseInput(f, victim.Dataset(), "victim", "v1"))
	wantAppError(t, err, bakeapi.ErrCorruptPartial)
}
