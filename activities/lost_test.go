package activities_test

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
	"github.com/whestbake/whestbake/internal/keys"
)

// wantGone fails unless err is the non-retryable failure of a committed
// object that vanished: it names the object in the bucket, says that it
// had been committed and that something outside whestbake deleted it, and
// is not taken for an object that was never written.
func wantGone(t *testing.T, f *fixture, err error, key, committed string) {
	t.Helper()
	msg := wantAppError(t, err, bakeapi.ErrCorruptPartial).Error()
	for _, want := range []string{
		"s3://" + f.bucket + "/" + key,
		committed,
		"something outside whestbake deleted it",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	for _, wrong := range []string{"never committed", "is missing"} {
		if strings.Contains(msg, wrong) {
			t.Errorf("error %q says %q of a committed object", msg, wrong)
		}
	}
}

// testCommittedObjectsThatVanishAreSaidToBeGone: objects that the steps
// before had committed, deleted behind the bake's back (a bucket emptied
// mid-bake), fail the step that reads them as gone, naming them, never as
// missing or never committed.
func testCommittedObjectsThatVanishAreSaidToBeGone(t *testing.T, f *fixture) {
	ctx := context.Background()
	a := f.acts(gpuengine.CPU{})
	const id = "vanished"
	b := keys.Bake(id)
	del := func(key string) {
		t.Helper()
		if err := f.st.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	// vanish deletes key and returns what puts it back, as from a backup.
	vanish := func(t *testing.T, key string) (restore func()) {
		t.Helper()
		data, err := f.st.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		del(key)
		return func() {
			if err := f.st.PutCreate(ctx, key, data); err != nil {
				t.Fatal(err)
			}
		}
	}
	sd := seedSplit(t, a, id, 3, 21)
	for k, r := range [][2]int{{0, 1}, {1, 3}} {
		mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(id, sd, k, r[0], r[1]))
	}
	merge := bakeapi.MergeSplitInput{
		BakeID:            id,
		Split:             split,
		NMLPs:             3,
		NSlices:           2,
		KeepIntermediates: true,
	}

	// A slice can commit its partial again: the merge discards the commit,
	// and the restart's BakeSlice commits it again from its results.
	t.Run("a file of a committed slice", func(t *testing.T) {
		m := readManifest(t, f.st, b.Slice(split, 1))
		file := path.Join(b.Slice(split, 1), m.Files[0].Path)
		del(file)
		_, err := run[bakeapi.MergeSplitOutput](a, a.MergeSplit, merge)
		wantGone(t, f, err, file, "was committed with its directory")
		if msg := err.Error(); !strings.Contains(msg, "was discarded") ||
			!strings.Contains(msg, "whestbake bake --id "+id) {
			t.Errorf("error %q does not say that a restart commits the slice again", msg)
		}
		if ok, _ := f.st.Exists(ctx, keys.Manifest(b.Slice(split, 1))); ok {
			t.Error("the commit of the slice with a gone file was kept")
		}
		out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(id, sd, 1, 1, 3))
		if out.Reused != 2 {
			t.Errorf("the restart's slice: %+v, want its 2 stored results reused", out)
		}
	})
	merged := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, merge)
	t.Run("the metadata of a committed merged split", func(t *testing.T) {
		key := merged.Prefix + "/metadata.json"
		defer vanish(t, key)()
		_, err := run[bakeapi.MergeSplitOutput](a, a.MergeSplit, merge)
		wantGone(t, f, err, key, "was committed with its directory")
	})
	combine := bakeapi.CombineSplitsInput{
		BakeID:            id,
		Splits:            []string{merged.Prefix},
		KeepIntermediates: true,
	}
	ds := mustRun[bakeapi.CombineSplitsOutput](t, a, a.CombineSplits, combine)
	push := releaseInput(f, ds.Prefix, id, "v1")
	t.Run("a file of the committed dataset", func(t *testing.T) {
		m := readManifest(t, f.st, ds.Prefix)
		file := path.Join(ds.Prefix, m.Files[len(m.Files)-1].Path)
		del(file)
		_, err := run[bakeapi.PushOutput](a, a.Push, push)
		wantGone(t, f, err, file, "was committed with its directory")
	})
	t.Run("the manifest of the committed dataset", func(t *testing.T) {
		del(keys.Manifest(ds.Prefix))
		_, err := run[bakeapi.PushOutput](a, a.Push, push)
		wantGone(t, f, err, ds.Prefix+"/", "was committed before this step ran")
		// The Hub push reads the same commit: gone before the Hub is asked.
		srv := hubtest.New(t)
		srv.AddToken("hf_lost_token", "alice", "write")
		a.HubToken = func() (string, error) { return "hf_lost_token", nil }
		hubIn := bakeapi.HubPushInput{
			DatasetPrefix: ds.Prefix,
			Hub:           bakeapi.HubSpec{Repo: "alice/gt", Endpoint: srv.URL},
		}
		_, err = run[bakeapi.HubPushOutput](a, a.HubPush, hubIn)
		wantGone(t, f, err, ds.Prefix+"/", "was committed before this step ran")
	})
	t.Run("the manifest of a committed merged split", func(t *testing.T) {
		del(keys.Manifest(merged.Prefix))
		_, err := run[bakeapi.CombineSplitsOutput](a, a.CombineSplits, combine)
		wantGone(t, f, err, merged.Prefix+"/", "was committed before this step ran")
	})
	t.Run("the seeds file GenerateSeeds stored", func(t *testing.T) {
		for _, key := range []string{
			sd.SeedsKey,
			b.IdentitiesDone(split),
			b.IdentityBlock(split, 0),
		} {
			del(key)
		}
		_, err := run[bakeapi.BakeSliceOutput](a, a.BakeSlice, sliceInput(id, sd, 2, 0, 3))
		wantGone(
			t,
			f,
			err,
			sd.SeedsKey,
			"was stored by GenerateSeeds (the workflow recorded its sha256 "+sd.SHA256+")",
		)
	})
	// Nothing proves that an uploaded seeds file was uploaded (a bake
	// started by another client has none): its absence says both.
	t.Run("the seeds file the starter uploads", func(t *testing.T) {
		in := bakeapi.GenerateSeedsInput{
			BakeID:      id,
			Split:       "uploaded",
			NMLPs:       3,
			UploadedKey: b.InputSeeds("uploaded"),
		}
		_, err := run[bakeapi.GenerateSeedsOutput](a, a.GenerateSeeds, in)
		msg := wantAppError(t, err, bakeapi.ErrInvalidSeeds).Error()
		for _, want := range []string{
			"s3://" + f.bucket + "/" + in.UploadedKey + " is not in the bucket",
			"something deleted it since",
			"or the bake was started by another client",
			"restart the bake with `whestbake bake --id vanished`",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
	})
}
