package activities_test

import (
	"context"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
)

// usage is what the store holds under prefix.
func usage(t *testing.T, f *fixture, prefix string) store.Tally {
	t.Helper()
	u, err := f.st.Usage(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// storageBake runs a one-split bake of 3 MLPs of a 64x4 shape in two slices
// through every activity, measuring what the store holds at each step's
// peak, and returns those peaks relative to the final dataset's size.
func storageBake(t *testing.T, f *fixture, bakeID string, keep bool) (peaks map[string]float64) {
	t.Helper()
	a := f.acts(gpuengine.CPU{})
	b := keys.Bake(bakeID)
	sd := seedSplit(t, a, bakeID, 3, 21)
	spec := bakeapi.Spec{
		Width:    64,
		Depth:    4,
		NSamples: 512,
		Sampler:  "philox",
	}
	for k, r := range [][2]int{{0, 1}, {1, 3}} {
		in := sliceInput(bakeID, sd, k, r[0], r[1])
		in.Spec = spec
		mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	}
	slices := usage(t, f, b.Slices(split))
	m := mustRun[bakeapi.MergeSplitOutput](
		t,
		a,
		a.MergeSplit,
		bakeapi.MergeSplitInput{
			BakeID:            bakeID,
			Split:             split,
			NMLPs:             3,
			NSlices:           2,
			KeepIntermediates: keep,
		},
	)
	// What the merge wrote: the merged split, and the split's files in the
	// dataset.
	merged := usage(t, f, m.Prefix+"/").Bytes
	made := usage(t, f, b.Dataset()+"/").Bytes
	left := usage(t, f, b.Slices(split)).Bytes // a merge beside them leaves them to the combine
	c := mustRun[bakeapi.CombineSplitsOutput](
		t,
		a,
		a.CombineSplits,
		bakeapi.CombineSplitsInput{
			BakeID:            bakeID,
			Splits:            []string{m.Prefix},
			KeepIntermediates: keep,
		},
	)
	final := usage(t, f, c.Prefix+"/")
	rel := keys.Release("releases-"+bakeID, "t", "v1")
	mustRun[bakeapi.PushOutput](
		t,
		a,
		a.Push,
		bakeapi.PushInput{
			DatasetPrefix: c.Prefix,
			Bucket:        f.bucket,
			Prefix:        "releases-" + bakeID,
			Name:          "t",
			Tag:           "v1",
		},
	)
	released := usage(t, f, rel+"/")
	d := float64(final.Bytes)
	// Each step's peak is its inputs and its committed output, before it deletes the inputs.
	return map[string]float64{
		"merge":   float64(slices.Bytes+merged+made) / d,
		"combine": float64(left+merged+final.Bytes) / d,
		"push":    float64(final.Bytes+released.Bytes) / d,
	}
}

// testIntermediatesAreDeletedAsConsumed: each step deletes what it consumed
// once its own output is committed, so storage peaks near twice the dataset
// (the slices' own metadata files are the excess), and a finished bake
// keeps its record, seeds file and dataset only.
func testIntermediatesAreDeletedAsConsumed(t *testing.T, f *fixture) {
	for step, p := range storageBake(t, f, "gc-auto", false) {
		if p > 2.1 {
			t.Errorf("storage during %s peaks at %.2fx the dataset, want at most about 2x",
				step, p)
		}
		t.Logf("peak storage during %s: %.3fx the dataset", step, p)
	}
	b := keys.Bake("gc-auto")
	left, err := f.st.List(context.Background(), b.Prefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range left {
		if b.Intermediate(k) {
			t.Errorf("%s outlived the bake", k)
		}
	}
	if ok, _ := f.st.Exists(context.Background(), b.Seeds(split)); !ok {
		t.Error("the seeds file was deleted")
	}
}

// testKeepIntermediates: with keep-intermediates every step's inputs stay.
func testKeepIntermediates(t *testing.T, f *fixture) {
	storageBake(t, f, "gc-keep", true)
	b := keys.Bake("gc-keep")
	// (A finished MLP deletes its own checkpoint, so there are none to keep.)
	for _, folder := range []string{
		b.SliceState(split)[0],
		b.SliceState(split)[1],
		b.Slices(split),
		b.Merged(split) + "/",
	} {
		if usage(t, f, folder).Objects == 0 {
			t.Errorf("%s is empty: keep-intermediates kept nothing there", folder)
		}
	}
}

// testRestartAfterCleanup: a bake restarted after its split was merged
// skips the slices, and one restarted after it combined, which deleted the
// merged split and the slices, skips the merge too, with the right count
// and without writing the identity blocks again.
func testRestartAfterCleanup(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	const bakeID = "gc-restart"
	seed := uint64(4)
	sd := seedSplit(t, a, bakeID, 3, seed)
	if sd.Merged {
		t.Fatal("a fresh split reported as merged")
	}
	mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, 0, 0, 3))
	in := bakeapi.MergeSplitInput{
		BakeID:  bakeID,
		Split:   split,
		NMLPs:   3,
		NSlices: 1,
	}
	m := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in)
	again := seedSplit(t, a, bakeID, 3, seed)
	if !again.Merged || again.SHA256 != sd.SHA256 {
		t.Errorf("GenerateSeeds after the merge: %+v, want the same seeds marked merged", again)
	}
	mustRun[bakeapi.CombineSplitsOutput](
		t,
		a,
		a.CombineSplits,
		bakeapi.CombineSplitsInput{BakeID: bakeID, Splits: []string{m.Prefix}},
	)
	if usage(t, f, m.Prefix+"/").Objects != 0 {
		t.Fatal("the merged split outlived the combine")
	}
	if out := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in); out.NMLPs != 3 ||
		out.Prefix != m.Prefix {
		t.Errorf("MergeSplit after the combine: %+v, want %d MLPs at %s", out, 3, m.Prefix)
	}
	if !seedSplit(t, a, bakeID, 3, seed).Merged {
		t.Error("GenerateSeeds after the combine: not marked merged")
	}
	if ok, _ := f.st.Exists(context.Background(), keys.Bake(bakeID).IdentitiesDone(split)); ok {
		t.Error("GenerateSeeds rewrote identity blocks for a merged split")
	}
}
