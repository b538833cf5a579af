package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
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
// merge fetches ahead merges to the bytes of a local bake, and leaves no
// scratch files.
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
		mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, k, k, k+1))
	}
	in := bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: n, NSlices: n}
	m := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in)
	got := mergedShardSHA(t, f, bakeID)
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

// testMergeSplitWaitsForItsSlices: the merge beside a split takes its
// slices as they are committed: a slice not baked yet is waited for, not
// missing: the merge goes on once it is committed, and the shard it writes
// into the dataset is the local bake's, byte for byte.
func testMergeSplitWaitsForItsSlices(t *testing.T, f *fixture) {
	const bakeID, n, seed = "following", 12, 6
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, bakeID, n, seed)
	for k := range n {
		if k != 7 {
			mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, k, k, k+1))
		}
	}
	in := bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: n, NSlices: n}
	type result struct {
		out bakeapi.MergeSplitOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := run[bakeapi.MergeSplitOutput](a, a.MergeSplit, in)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the merge ended (%+v, %v) while slice 7 was not baked", r.out, r.err)
	case <-time.After(2 * time.Second):
	}
	mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, 7, 7, 8))
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the merge did not end a minute after its last slice was committed")
	}
	if r.err != nil || r.out.NMLPs != n {
		t.Fatalf("merge: %+v, %v; want %d MLPs", r.out, r.err, n)
	}
	if got, want := mergedShardSHA(t, f, bakeID), localParquetSHA(t, n, seed, 0, n); got != want {
		t.Errorf("the shard in the dataset has sha256 %s, the local bake's %s", got, want)
	}
}

// testMergeSplitCancelledEndsCancelled: a merge beside its split,
// cancelled while it waits for a slice because the bake is being
// cancelled, ends with the cancellation, every time. Were its wait to end
// as if every slice had come, the merge would fail for good with a gap in
// the split, CorruptPartial, and fail the bake being cancelled instead of
// letting it close as cancelled.
func testMergeSplitCancelledEndsCancelled(t *testing.T, f *fixture) {
	const bakeID, n, seed = "following-cancelled", 3, 9
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, bakeID, n, seed)
	mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, 0, 0, 1))
	in := bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: n, NSlices: n}
	for try := range 12 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(try)*20*time.Millisecond, cancel)
		_, err := a.MergeSplit(ctx, in)
		cancel()
		var app *temporal.ApplicationError
		if !errors.Is(err, context.Canceled) || errors.As(err, &app) {
			t.Fatalf("try %d: a cancelled merge ended with %v, want context.Canceled", try, err)
		}
	}
}

// testStaleMergeFindsTheSplitMerged: an attempt of a merge that lags
// behind another, which merged the split, and the combine, which then
// deleted the slices on purpose, finds the slices gone and ends with the
// merged split: no damage, nothing gone behind the bake's back.
func testStaleMergeFindsTheSplitMerged(t *testing.T, f *fixture) {
	const bakeID, n, seed = "stale-merge", 3, 12
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, bakeID, n, seed)
	for k := range n {
		mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, k, k, k+1))
	}
	in := bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: n, NSlices: n}
	// The lagging attempt's read of slice 1 is held until the split is
	// merged and combined.
	proxy := devtest.StartFaultProxy(t, f.cfg.Endpoint)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	proxy.SetFault(func(r *http.Request) devtest.Fault {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/slices/00001/") {
			once.Do(func() { close(held) })
			<-release
		}
		return devtest.Fault{}
	})
	lagging := f.acts(gpuengine.CPU{})
	lagging.Store = f.storeVia(t, proxy.Addr)
	done := make(chan error, 1)
	var out bakeapi.MergeSplitOutput
	go func() {
		var err error
		out, err = run[bakeapi.MergeSplitOutput](lagging, lagging.MergeSplit, in)
		done <- err
	}()
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("the lagging merge never read slice 1")
	}
	merged := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in)
	mustRun[bakeapi.CombineSplitsOutput](t, a, a.CombineSplits, bakeapi.CombineSplitsInput{
		BakeID: bakeID,
		Splits: []string{merged.Prefix},
	})
	close(release)
	if err := <-done; err != nil || out.NMLPs != n {
		t.Errorf("the lagging merge: %+v, %v; want the merged split of %d MLPs", out, err, n)
	}
}

// testCombineRefusesASummaryNamingAFileTwice: a merged split's summary,
// whose file list the dataset's manifest is made of, is held to the rule
// of every manifest: one that lists the shard twice, once as ./path, fails
// the combine for good rather than be folded away unseen.
func testCombineRefusesASummaryNamingAFileTwice(t *testing.T, f *fixture) {
	ctx := context.Background()
	const bakeID, n, seed = "summary-twice", 2, 14
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, bakeID, n, seed)
	for k := range n {
		mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput(bakeID, sd, k, k, k+1))
	}
	in := bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: n, NSlices: n}
	merged := mustRun[bakeapi.MergeSplitOutput](t, a, a.MergeSplit, in)
	dir := fetch(t, f, merged.Prefix)
	var sum struct {
		Files           []manifest.File `json:"files"`
		Stats           json.RawMessage `json:"stats"`
		PreparedChecked string          `json:"prepared_checked"`
		Seal            seal.Seal       `json:"seal"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || json.Unmarshal(data, &sum) != nil {
		t.Fatalf("the merged split's summary: %v", err)
	}
	twice := sum.Files[0]
	twice.Path = "./" + twice.Path
	sum.Files = append(sum.Files, twice)
	id := sum.Seal
	id.SHA256 = ""
	if data, err = seal.Marshal(&sum, &sum.Seal, id); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Delete(ctx, keys.Manifest(merged.Prefix)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := activities.CommitDir(ctx, f.st, dir, merged.Prefix,
		seal.Seal{Bake: bakeID, Split: split}); err != nil {
		t.Fatal(err)
	}
	_, err = run[bakeapi.CombineSplitsOutput](a, a.CombineSplits, bakeapi.CombineSplitsInput{
		BakeID: bakeID,
		Splits: []string{merged.Prefix},
	})
	app := wantAppError(t, err, bakeapi.ErrCorruptPartial)
	if !strings.Contains(app.Error(), "twice") {
		t.Errorf("the combine of a summary naming a file twice: %v", app)
	}
}

// noScratch fails if dir holds anything.
func noScratch(t *testing.T, dir string) {
	t.Helper()
	if es, err := os.ReadDir(dir); err != nil || len(es) != 0 {
		t.Errorf("scratch directory holds %v (%v), want nothing", es, err)
	}
}

// mergedShardSHA is the sha256 of the parquet shard that bakeID's merge of
// the split wrote into the dataset, as the merged split's summary lists it,
// checked against the bytes at its key.
func mergedShardSHA(t *testing.T, f *fixture, bakeID string) string {
	t.Helper()
	dir := fetch(t, f, keys.Bake(bakeID).Merged(split))
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("the merged split holds no summary: %v", err)
	}
	var sum struct{ Files []manifest.File }
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	for _, file := range sum.Files {
		if file.Path == "data/"+split+"-00000-of-00001.parquet" {
			key := path.Join(keys.Bake(bakeID).Dataset(), file.Path)
			if err := f.st.Check(context.Background(), key, file.SHA256, nil); err != nil {
				t.Fatalf("the shard in the dataset: %v", err)
			}
			return file.SHA256
		}
	}
	t.Fatalf("the merged split's summary lists no shard: %+v", sum.Files)
	return ""
}
