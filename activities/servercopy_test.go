package activities_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/shards"
	"github.com/whestbake/whestbake/internal/store"
)

// testCopiesOnTheServerChangeNoByte: with every file copied on the server
// (CombineSplits' parquet into the dataset, every file of Push into the
// release), the dataset and the release hold exactly the files of a bake
// whose bytes all pass through the worker, each one proven by a read; the
// bake's word that it checked the prepared tree names its manifest.
func testCopiesOnTheServerChangeNoByte(t *testing.T, f *fixture) {
	ctx := context.Background()
	through := bakeDataset(t, f, "through-worker", 21)
	activities.SetServerCopyBytes(t, 1)
	onServer := bakeDataset(t, f, "on-server", 21)
	// Files of the dataset's rows, not of the hour it was baked in
	// (metadata.json and the card date it).
	rows := func(prefix string) []manifest.File {
		return slices.DeleteFunc(readManifest(t, f.st, prefix).Files, func(f manifest.File) bool {
			return f.Path == dataset.MetadataFile || f.Path == "README.md"
		})
	}
	want, got := rows(through.Prefix), rows(onServer.Prefix)
	if !slices.Equal(got, want) {
		t.Fatalf("the dataset copied on the server lists\n%+v\nthe one through the worker\n%+v",
			got, want)
	}
	if ok, err := f.st.Exists(
		ctx,
		keys.Bake("on-server").PreparedCheck(onServer.ManifestSHA256),
	); !ok || err != nil {
		t.Errorf("CombineSplits left no word that it checked the prepared tree (%v)", err)
	}
	a := f.acts(gpuengine.CPU{})
	mustRun[bakeapi.PushOutput](t, a, a.Push, releaseInput(f, onServer.Prefix, "server", "v1"))
	rel := keys.Release("datasets", "server", "v1")
	for _, file := range readManifest(t, f.st, onServer.Prefix).Files {
		if err := f.st.Check(ctx, path.Join(rel, file.Path), file.SHA256, nil); err != nil {
			t.Errorf("release file %s: %v", file.Path, err)
		}
	}
}

// testPushOnTheServerRefusesRewrittenBytes: a dataset file rewritten in the
// bucket under its recorded sha256 is copied on the server and caught by
// the read that proves the copy: the push fails for good, naming the file,
// and leaves no copy of it in the release; a copy that an interrupted
// attempt left unread is read before it counts.
func testPushOnTheServerRefusesRewrittenBytes(t *testing.T, f *fixture) {
	ctx := context.Background()
	activities.SetServerCopyBytes(t, 1)
	ds := bakeDataset(t, f, "server-rewritten", 22)
	a := f.acts(gpuengine.CPU{})
	m := readManifest(t, f.st, ds.Prefix)
	i := slices.IndexFunc(m.Files, func(f manifest.File) bool {
		return dataset.IsShardFile(f.Path)
	})
	file := m.Files[i]
	src := path.Join(ds.Prefix, file.Path)
	// Other bytes under the sha256 of the manifest, as a rewrite that
	// copied it into the object's metadata would leave them.
	putRecordingSHA256(t, f, src, file.SHA256, bytes.Repeat([]byte{'x'}, int(file.Size)))
	_, err := run[bakeapi.PushOutput](a, a.Push, releaseInput(f, ds.Prefix, "demo", "srv1"))
	app := wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if !strings.Contains(app.Error(), file.Path) {
		t.Errorf("error %q does not name the file %s", app.Error(), file.Path)
	}
	rel := keys.Release("datasets", "demo", "srv1")
	if keys, err := f.st.List(ctx, rel+"/"); err != nil || slices.Contains(keys,
		path.Join(rel, file.Path)) {
		t.Errorf("the refused push left %v (%v)", keys, err)
	}

	// What an attempt cut off between the server's copy and its read would
	// leave: the wrong bytes under the right recorded sha256.
	left := path.Join(keys.Release("datasets", "demo", "srv2"), file.Path)
	putRecordingSHA256(t, f, left, file.SHA256, bytes.Repeat([]byte{'x'}, int(file.Size)))
	_, err = run[bakeapi.PushOutput](a, a.Push, releaseInput(f, ds.Prefix, "demo", "srv2"))
	app = wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if !strings.Contains(app.Error(), "left by an earlier attempt, or written by another writer") {
		t.Errorf("error %q does not say the leftover is not what it records", app.Error())
	}
	if ok, _ := f.st.Exists(ctx, keys.Manifest(keys.Release("datasets", "demo", "srv2"))); ok {
		t.Error("a release with an unproven file was made visible")
	}
}

// testPushCopiesAReplacedSourceOnceMore: a dataset file that a writer of
// the same bytes replaced while S3 copied it (the merge wrote it in parts,
// the writer in one PUT: its ETag changed, so S3
// refused the next part under x-amz-copy-source-if-match) is copied once
// more, and the release is complete. The refusal used to be taken for a
// release file another copy had written, then found missing: the push
// failed as if the release bucket had lost a file.
func testPushCopiesAReplacedSourceOnceMore(t *testing.T, f *fixture) {
	ctx := context.Background()
	activities.SetServerCopyBytes(t, 1)
	ds := bakeDataset(t, f, "server-replaced", 23)
	m := readManifest(t, f.st, ds.Prefix)
	shard := m.Files[slices.IndexFunc(m.Files, func(f manifest.File) bool {
		return dataset.IsShardFile(f.Path)
	})]
	src := path.Join(ds.Prefix, shard.Path)
	data, err := f.st.Get(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	proxy := devtest.StartFaultProxy(t, f.cfg.Endpoint)
	var replaced sync.Once
	proxy.SetFault(func(r *http.Request) devtest.Fault {
		if strings.HasSuffix(r.Header.Get("X-Amz-Copy-Source"), shard.Path) {
			replaced.Do(func() { putRecordingSHA256(t, f, src, shard.SHA256, data) })
		}
		return devtest.Fault{}
	})
	a := f.acts(gpuengine.CPU{})
	a.Store = f.storeVia(t, proxy.Addr)
	mustRun[bakeapi.PushOutput](t, a, a.Push, releaseInput(f, ds.Prefix, "demo", "replaced"))
	got, err := f.st.Get(ctx, path.Join(keys.Release("datasets", "demo", "replaced"), shard.Path))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("the released shard: %d bytes, %v; want the %d bytes of the dataset's",
			len(got), err, len(data))
	}
}

// testCombineIsTheLocalCombine: a bake's merge and combine give the bytes
// that `whestbake dataset merge` and `combine-splits` give of the same
// slices, file for file: with the merged split that MergeSplit writes of
// one slice or several, holding a summary in place of its rows; with the
// split in one shard, and in shards of two rows (internal/shards), which the
// merge and the combine cut as the local verbs do.
func testCombineIsTheLocalCombine(t *testing.T, f *fixture) {
	ctx := context.Background()
	a := f.acts(gpuengine.CPU{})
	at := time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)
	for _, c := range []struct {
		bake     string
		cuts     [][2]int
		perShard int64 // rows, when the split is cut into shards
	}{
		{"combine-made", [][2]int{{0, 1}, {1, 3}}, 0},
		{"combine-made-shards", [][2]int{{0, 1}, {1, 3}}, 2},
		{"combine-one-slice-shards", [][2]int{{0, 3}}, 2},
	} {
		t.Run(c.bake, func(t *testing.T) {
			if c.perShard > 0 {
				t.Cleanup(shards.SetLimit(shards.FileBytes +
					c.perShard*shards.RowBytes(shape.Width, shape.Depth)))
			}
			b := keys.Bake(c.bake)
			sd := seedSplit(t, a, c.bake, 3, 31)
			var slices []string
			for k, r := range c.cuts {
				mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(c.bake, sd, k, r[0], r[1]))
				slices = append(slices, fetch(t, f, b.Slice(split, k)))
			}
			local := filepath.Join(t.TempDir(), "merged")
			if len(slices) == 1 {
				local = slices[0]
			} else if err := dataset.Merge(slices, local, at); err != nil {
				t.Fatal(err)
			}
			in := bakeapi.MergeSplitInput{
				BakeID:    c.bake,
				Split:     split,
				NMLPs:     3,
				NSlices:   len(c.cuts),
				CreatedAt: at,
			}
			mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in)
			ds := mustRun[bakeapi.CombineSplitsOutput](t, a, a.CombineSplits,
				bakeapi.CombineSplitsInput{BakeID: c.bake, Splits: []string{b.Merged(split)}})
			combined := filepath.Join(t.TempDir(), "combined")
			if err := report.Combine([]string{local}, combined, ""); err != nil {
				t.Fatal(err)
			}
			got := readManifest(t, f.st, ds.Prefix).Files
			var want []string
			if err := filepath.WalkDir(combined, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(combined, p)
					want = append(want, filepath.ToSlash(rel))
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			shardFiles := 0
			for _, w := range want {
				if strings.HasPrefix(w, "data/") || strings.HasSuffix(w, ".arrow") {
					shardFiles++
				}
			}
			if len(got) != len(want) || c.perShard > 0 && shardFiles != 4 {
				t.Fatalf("the bake's dataset lists %d files, the local combine wrote %d: %v",
					len(got), len(want), want)
			}
			for _, file := range got {
				sum, err := store.FileSHA256(filepath.Join(combined, filepath.FromSlash(file.Path)))
				if err != nil || sum != file.SHA256 {
					t.Errorf("%s: sha256 %s, the local combine's %s (%v)",
						file.Path, file.SHA256, sum, err)
				}
				if err := f.st.Check(ctx, path.Join(ds.Prefix, file.Path), file.SHA256, nil); err != nil {
					t.Errorf("%s in the bucket: %v", file.Path, err)
				}
			}
		})
	}
}
