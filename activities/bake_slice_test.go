package activities_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

const split = "public"

func seedSplit(
	t *testing.T,
	a *activities.Activities,
	bakeID string,
	n int,
	seed uint64,
) bakeapi.GenerateSeedsOutput {
	t.Helper()
	return mustRun[bakeapi.GenerateSeedsOutput](t, a, a.GenerateSeeds, seedsInput(bakeID, n, seed))
}

func sliceInput(
	bakeID string,
	sd bakeapi.GenerateSeedsOutput,
	slice, start, end int,
) bakeapi.BakeSliceInput {
	return bakeapi.BakeSliceInput{
		BakeID:      bakeID,
		Split:       split,
		Config:      "default",
		Slice:       slice,
		Start:       start,
		End:         end,
		NMLPs:       sd.NMLPs,
		SeedsKey:    sd.SeedsKey,
		SeedsSHA256: sd.SHA256,
		Spec:        shape,
	}
}

// parquetSHA is the sha256 the committed directory's manifest records for its
// one parquet file (metadata.json carries a timestamp, so it is not compared).
func parquetSHA(t *testing.T, st *store.Store, prefix string) string {
	t.Helper()
	m := readManifest(t, st, prefix)
	var sums []string
	for _, f := range m.Files {
		if strings.HasSuffix(f.Path, ".parquet") {
			sums = append(sums, f.SHA256)
		}
	}
	if len(sums) != 1 {
		t.Fatalf("%s: %d parquet files in the manifest, want 1", prefix, len(sums))
	}
	return sums[0]
}

// readManifest reads a committed directory's manifest.
func readManifest(t *testing.T, st *store.Store, prefix string) manifest.Manifest {
	t.Helper()
	m, _, err := manifest.Read(context.Background(), st, prefix)
	if err != nil {
		t.Fatalf("%s has no manifest: %v", prefix, err)
	}
	return m
}

// localParquetSHA bakes MLPs [start, end) of the seeds without the store, as
// `whestbake dataset bake --mlp-range` does, and returns its parquet's sha256.
// bakeLocally writes to dir the dataset a local bake of plan writes, its
// MLPs those of the seeds list under salt.
func bakeLocally(t *testing.T, dir string, plan rows.Plan, list []int64, salt seeds.Salt) {
	t.Helper()
	md := rows.Metadata(plan, gpuengine.CPU{}.Describe(), time.Now())
	baker := rows.Baker{Engine: gpuengine.CPU{}, Spec: plan.Spec, Threads: 1}
	rows := func(write func(dataset.Row) error) error {
		return baker.Stream(context.Background(), mlps.Identities(list, salt), plan.Range, write)
	}
	if err := dataset.WriteDirStream(dir, md, plan.Spec, rows); err != nil {
		t.Fatal(err)
	}
}

func localParquetSHA(t *testing.T, n int, seed uint64, start, end int) string {
	t.Helper()
	list, err := seeds.GenerateInputSeeds(n, &seed)
	if err != nil {
		t.Fatal(err)
	}
	spec := shape
	plan := rows.Plan{
		NMLPs:  n,
		Seeds:  mlps.FromSeeds(list),
		Range:  bakeapi.Range{Start: start, End: end},
		Spec:   spec,
		Split:  split,
		Config: "default",
	}
	dir := filepath.Join(t.TempDir(), "local")
	bakeLocally(t, dir, plan, list, seeds.Salt{})
	files, _ := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	if len(files) != 1 {
		t.Fatalf("local bake wrote %v, want one parquet file", files)
	}
	sum, err := store.FileSHA256(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func testBakeSliceIsIdempotent(t *testing.T, f *fixture) {
	eng := &countingEngine{}
	a := f.acts(eng)
	sd := seedSplit(t, a, "idem", 6, 7)
	in := sliceInput("idem", sd, 1, 2, 5)
	first := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	if first.Computed != 3 || first.Reused != 0 || first.Resumed != 0 ||
		first.Prefix != keys.Bake("idem").Slice(split, 1) {
		t.Fatalf(
			"first attempt %+v, want 3 computed at %s",
			first,
			keys.Bake("idem").Slice(split, 1),
		)
	}
	second := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	if second.Reused != 3 || second.Computed != 0 || second.Resumed != 0 {
		t.Errorf("second attempt %+v, want all 3 MLPs reused", second)
	}
	if second.ManifestSHA256 != first.ManifestSHA256 || second.Prefix != first.Prefix {
		t.Errorf(
			"second attempt committed %s %s, first %s %s",
			second.Prefix,
			second.ManifestSHA256,
			first.Prefix,
			first.ManifestSHA256,
		)
	}
	if calls, _ := eng.count(); calls != 3 {
		t.Errorf("engine ran %d MLPs over two attempts, want 3 (nothing recomputed)", calls)
	}
	if got, want := parquetSHA(t, f.st, first.Prefix), localParquetSHA(t, 6, 7, 2, 5); got != want {
		t.Errorf("slice parquet sha256 %s, local bake of MLPs 2-4 %s", got, want)
	}
}

// testBakeSliceKeepsFinishedMLPs: an attempt that dies on its third MLP
// leaves the first two in the store; the retry reuses them.
func testBakeSliceKeepsFinishedMLPs(t *testing.T, f *fixture) {
	dying := &countingEngine{
		failAt: map[int]error{
			3: errors.New("CUDA error: an illegal memory access was encountered"),
		},
	}
	a := f.acts(dying)
	sd := seedSplit(t, a, "crash", 4, 9)
	in := sliceInput("crash", sd, 0, 0, 4)
	if _, err := run[bakeapi.BakeSliceOutput](a, a.BakeSlice, in); err == nil ||
		!strings.Contains(err.Error(), "illegal memory access") {
		t.Fatalf("dying attempt: error %v, want the engine's", err)
	}
	for m := range 4 {
		ok, err := f.st.Exists(context.Background(), keys.Bake("crash").MLPResult(split, m))
		if err != nil || ok != (m < 2) {
			t.Errorf(
				"after the failure, MLP %d result exists=%v (%v); want only MLPs 0 and 1",
				m,
				ok,
				err,
			)
		}
	}
	eng := &countingEngine{}
	out := mustRun[bakeapi.BakeSliceOutput](t, f.acts(eng), f.acts(eng).BakeSlice, in)
	if out.Reused != 2 || out.Computed != 2 || out.Resumed != 0 {
		t.Errorf("retry %+v, want 2 reused and 2 computed", out)
	}
	if calls, _ := eng.count(); calls != 2 {
		t.Errorf("retry ran the engine %d times, want 2", calls)
	}
	if got, want := parquetSHA(t, f.st, out.Prefix), localParquetSHA(t, 4, 9, 0, 4); got != want {
		t.Errorf("slice parquet sha256 %s, local bake %s", got, want)
	}
}

// interruptedCheckpoint runs MLP m's engine until about half its samples are
// done, cancels it, and returns the last checkpoint it reported (the engine's
// contract: that is a valid resume point).
func interruptedCheckpoint(t *testing.T, n int, seed uint64, m int) gpuengine.Checkpoint {
	t.Helper()
	list, _ := seeds.GenerateInputSeeds(n, &seed)
	id := mlps.Identities(list, seeds.Salt{})[m]
	spec := shape
	w, err := seeds.Weights(spec.Width, spec.Depth, id.Streams.Weight)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last []byte
	_, err = gpuengine.CPU{}.BakeMLP(
		ctx,
		spec,
		gpuengine.Job{Weights: w, Sample: id.Streams.Sample},
		nil,
		func(cp gpuengine.Checkpoint) {
			last, _ = json.Marshal(cp) // the engine reuses the slices: copy now
			if cp.SamplesDone >= spec.NSamples/2 {
				cancel()
			}
		},
	)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted engine returned %v, want context.Canceled", err)
	}
	var cp gpuengine.Checkpoint
	if err := json.Unmarshal(last, &cp); err != nil {
		t.Fatal(err)
	}
	if cp.SamplesDone <= 0 || cp.SamplesDone >= spec.NSamples {
		t.Fatalf("checkpoint at %d of %d samples: not mid-MLP", cp.SamplesDone, spec.NSamples)
	}
	return cp
}

func testBakeSliceResumesFromCheckpoint(t *testing.T, f *fixture) {
	eng := &countingEngine{}
	a := f.acts(eng)
	sd := seedSplit(t, a, "resume", 3, 21)
	cp := interruptedCheckpoint(t, 3, 21, 1)
	putCheckpoint(t, f.st, "resume", 1, cp, "")
	ckKey := keys.Bake("resume").MLPCheckpoint(split, 1)
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput("resume", sd, 0, 0, 3))
	if out.Resumed != 1 || out.Computed != 2 || out.Reused != 0 {
		t.Errorf("%+v, want MLP 1 resumed and 0, 2 computed", out)
	}
	if _, resumes := eng.count(); !slices.Equal(resumes, []int64{cp.SamplesDone}) {
		t.Errorf(
			"engine resumed from %v, want once from the stored checkpoint at %d samples",
			resumes,
			cp.SamplesDone,
		)
	}
	if ok, _ := f.st.Exists(context.Background(), ckKey); ok {
		t.Errorf("checkpoint %s still exists after its MLP finished", ckKey)
	}

	// The same slice never interrupted, in another bake: every bit equal.
	ref := f.acts(gpuengine.CPU{})
	refSeeds := seedSplit(t, ref, "resume-ref", 3, 21)
	refOut := mustRun[bakeapi.BakeSliceOutput](
		t,
		ref,
		ref.BakeSlice,
		sliceInput("resume-ref", refSeeds, 0, 0, 3),
	)
	for m := range 3 {
		got, err1 := unsealed(f.st, keys.Bake("resume").MLPResult(split, m))
		want, err2 := unsealed(f.st, keys.Bake("resume-ref").MLPResult(split, m))
		if err := errors.Join(err1, err2); err != nil || string(got) != string(want) {
			t.Errorf(
				"MLP %d result differs from the uninterrupted bake (%v)\n got %s\nwant %s",
				m,
				err,
				got,
				want,
			)
		}
	}
	got, want := parquetSHA(t, f.st, out.Prefix), parquetSHA(t, f.st, refOut.Prefix)
	if local := localParquetSHA(t, 3, 21, 0, 3); got != want || got != local {
		t.Errorf("parquet sha256: resumed %s, uninterrupted %s, local bake %s", got, want, local)
	}
}

// unsealed is the stored JSON object at key without its seal, which names
// the key and bake.
func unsealed(st *store.Store, key string) ([]byte, error) {
	data, err := st.Get(context.Background(), key)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	delete(fields, "seal")
	return json.Marshal(fields)
}

// sealedCheckpoint is a checkpoint as BakeSlice stores it (its storedCheckpoint).
type sealedCheckpoint struct {
	Fingerprint string `json:"fingerprint,omitempty"`
	gpuengine.Checkpoint
	Seal seal.Seal `json:"seal"`
}

// putCheckpoint stores cp as bake bakeID's checkpoint of MLP m, sealed for
// spec fingerprint fp, and returns the bytes.
func putCheckpoint(
	t *testing.T,
	st *store.Store,
	bakeID string,
	m int,
	cp gpuengine.Checkpoint,
	fp string,
) []byte {
	t.Helper()
	key := keys.Bake(bakeID).MLPCheckpoint(split, m)
	sc := sealedCheckpoint{Fingerprint: fp, Checkpoint: cp}
	data, err := seal.Marshal(
		&sc,
		&sc.Seal,
		seal.Seal{
			Key:         key,
			Bake:        bakeID,
			Split:       split,
			Fingerprint: fp,
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	return data
}

// sliceSetup prepares the store for a slice of bake bakeID, whose split's
// seeds are sd.
type sliceSetup func(t *testing.T, bakeID string, sd bakeapi.GenerateSeedsOutput)

// testBakeSliceRefusesStateOfAnotherSpec: intact objects of this bake ID
// computed for another spec (or that the engine cannot resume) fail the
// slice non-retryably, naming the object, and nothing is committed.
func testBakeSliceRefusesStateOfAnotherSpec(t *testing.T, f *fixture) {
	cp := interruptedCheckpoint(t, 3, 5, 1)
	beyond, numpy := cp, cp
	beyond.SamplesDone = 99999999
	numpy.Algorithm = bakeapi.NumpyAlgorithm
	cases := []struct {
		name, kind, object string
		setup              sliceSetup
	}{
		{
			"result of another spec of this bake ID",
			bakeapi.ErrFingerprintMismatch,
			"mlp-000000",
			func(t *testing.T, bakeID string, sd bakeapi.GenerateSeedsOutput) {
				dying := f.acts(
					&countingEngine{failAt: map[int]error{2: errors.New("stop after MLP 0")}},
				)
				in := sliceInput(bakeID, sd, 0, 0, 3)
				in.Fingerprint = "another spec"
				if _, err := run[bakeapi.BakeSliceOutput](dying, dying.BakeSlice, in); err == nil {
					t.Fatal("the dying attempt succeeded")
				}
			},
		},
		{
			"checkpoint of another spec of this bake ID",
			bakeapi.ErrFingerprintMismatch,
			"mlp-000001",
			func(t *testing.T, bakeID string, _ bakeapi.GenerateSeedsOutput) {
				putCheckpoint(t, f.st, bakeID, 1, cp, "another spec")
			},
		},
		{
			"checkpoint beyond n-samples",
			bakeapi.ErrCorruptPartial,
			"mlp-000001",
			func(t *testing.T, bakeID string, _ bakeapi.GenerateSeedsOutput) {
				putCheckpoint(t, f.st, bakeID, 1, beyond, "this spec")
			},
		},
		{
			"checkpoint of another algorithm",
			bakeapi.ErrFingerprintMismatch,
			"mlp-000001",
			func(t *testing.T, bakeID string, _ bakeapi.GenerateSeedsOutput) {
				putCheckpoint(t, f.st, bakeID, 1, numpy, "this spec")
			},
		},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bakeID := fmt.Sprintf("otherspec-%d", i)
			a := f.acts(gpuengine.CPU{})
			sd := seedSplit(t, a, bakeID, 3, 5)
			c.setup(t, bakeID, sd)
			in := sliceInput(bakeID, sd, 0, 0, 3)
			in.Fingerprint = "this spec"
			_, err := run[bakeapi.BakeSliceOutput](a, a.BakeSlice, in)
			app := wantAppError(t, err, c.kind)
			if !strings.Contains(app.Error(), c.object) {
				t.Errorf("error %q does not name the object %s", app.Error(), c.object)
			}
			if ok, _ := f.st.Exists(
				context.Background(),
				keys.Manifest(keys.Bake(bakeID).Slice(split, 0)),
			); ok {
				t.Error("a slice with state of another spec was committed")
			}
		})
	}
}

// putPlain writes data at key as any S3 tool would: without the sha256
// whestbake records.
func putPlain(t *testing.T, f *fixture, key string, data []byte) {
	t.Helper()
	c := rawClient(t, f)
	if _, err := c.PutObject(
		context.Background(),
		f.bucket,
		key,
		bytes.NewReader(data),
		int64(len(data)),
		minio.PutObjectOptions{},
	); err != nil {
		t.Fatal(err)
	}
}

// testBakeSliceKeepsWorkFromBeforeSeals: a bake running across the upgrade
// that introduced seals keeps its results and committed slices, which have
// no seal but the sha256 the store recorded when they were put; the same
// object without that sha256 (a plain PUT, a copy without metadata) is
// discarded and recomputed.
func testBakeSliceKeepsWorkFromBeforeSeals(t *testing.T, f *fixture) {
	ctx := context.Background()
	const bakeID = "before-seals"
	b := keys.Bake(bakeID)
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, bakeID, 3, 41)
	in := sliceInput(bakeID, sd, 0, 0, 3)
	first := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	old := func(key string) []byte {
		t.Helper()
		data, err := unsealed(f.st, key)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for m := range 2 {
		if err := f.st.Put(ctx, b.MLPResult(split, m), old(b.MLPResult(split, m))); err != nil {
			t.Fatal(err)
		}
	}
	putPlain(t, f, b.MLPResult(split, 2), old(b.MLPResult(split, 2)))
	if err := f.st.Delete(ctx, keys.Manifest(first.Prefix)); err != nil {
		t.Fatal(err)
	}
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	if out.Reused != 2 || out.Computed != 1 || out.Discarded != 1 {
		t.Errorf(
			"%+v, want MLPs 0 and 1 (recorded sha256, no seal) reused, MLP 2 "+
				"(neither) discarded and computed",
			out,
		)
	}
	if err := f.st.Put(
		ctx,
		keys.Manifest(first.Prefix),
		old(keys.Manifest(first.Prefix)),
	); err != nil {
		t.Fatal(err)
	}
	if again := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in); again.Reused != 3 ||
		again.Discarded != 0 {
		t.Errorf("%+v, want the slice committed before seals reused", again)
	}
	got := parquetSHA(t, f.st, first.Prefix)
	want := localParquetSHA(t, 3, 41, 0, 3)
	if got != want {
		t.Errorf("parquet sha256 %s, local bake %s", got, want)
	}
}

// putKeepingRecordedSHA256 overwrites key with data but leaves the sha256
// the store recorded for the old bytes, as a tool that rewrites an object
// and copies its metadata would.
func putKeepingRecordedSHA256(t *testing.T, f *fixture, key string, data []byte) {
	t.Helper()
	info, err := f.st.Stat(context.Background(), key)
	if err != nil || info.SHA256 == "" {
		t.Fatalf("stat %s: %+v %v", key, info, err)
	}
	putRecordingSHA256(t, f, key, info.SHA256, data)
}

// putRecordingSHA256 writes data at key with sum as its recorded sha256,
// whatever the bytes hash to.
func putRecordingSHA256(t *testing.T, f *fixture, key, sum string, data []byte) {
	t.Helper()
	c := rawClient(t, f)
	if _, err := c.PutObject(
		context.Background(),
		f.bucket,
		key,
		bytes.NewReader(data),
		int64(len(data)),
		minio.PutObjectOptions{UserMetadata: map[string]string{"sha256": sum}},
	); err != nil {
		t.Fatal(err)
	}
}

// testBakeSliceRecomputesDamagedState: stored results and checkpoints
// whose bytes changed after they were written, by a plain PUT (S3 metadata
// matching the new bytes) or with the old recorded sha256 kept, are never
// baked into the partial: each is discarded, counted and recomputed, in
// the same attempt, and the partial is the local bake's. Without seals the
// one-ulp mean was published; with the store's sha256 alone the kept
// sha256 failed every retry.
func testBakeSliceRecomputesDamagedState(t *testing.T, f *fixture) {
	ctx := context.Background()
	const bakeID, n, seed = "damaged", 4, 31
	b := keys.Bake(bakeID)
	dying := f.acts(&countingEngine{failAt: map[int]error{3: errors.New("stop after MLP 1")}})
	sd := seedSplit(t, dying, bakeID, n, seed)
	in := sliceInput(bakeID, sd, 0, 0, n)
	in.Fingerprint = "this spec"
	if _, err := run[bakeapi.BakeSliceOutput](dying, dying.BakeSlice, in); err == nil {
		t.Fatal("the dying attempt succeeded")
	}
	// MLP 0: one ulp up in its first mean, by a plain PUT; MLP 1: the
	// same, under the sha256 the store recorded for the old bytes.
	oneULP := func(m int) []byte {
		t.Helper()
		data, err := f.st.Get(ctx, b.MLPResult(split, m))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Bits []uint32 `json:"layer_means_bits"`
		}
		if err := json.Unmarshal(data, &r); err != nil || len(r.Bits) == 0 {
			t.Fatalf("result of MLP %d: %v", m, err)
		}
		was := fmt.Sprintf(`"layer_means_bits":[%d`, r.Bits[0])
		changed := bytes.Replace(
			data,
			[]byte(was),
			[]byte(fmt.Sprintf(`"layer_means_bits":[%d`, r.Bits[0]+1)),
			1,
		)
		if bytes.Equal(changed, data) {
			t.Fatalf("the test did not change the result of MLP %d", m)
		}
		return changed
	}
	ulp := oneULP(0)
	if err := f.st.Put(ctx, b.MLPResult(split, 0), ulp); err != nil {
		t.Fatal(err)
	}
	putKeepingRecordedSHA256(t, f, b.MLPResult(split, 1), oneULP(1))
	// MLP 2: a checkpoint with one hex digit of an exact sum changed.
	cp := interruptedCheckpoint(t, n, seed, 2)
	good := putCheckpoint(t, f.st, bakeID, 2, cp, "this spec")
	if len(cp.LayerExact) == 0 {
		t.Fatal("the philox checkpoint has no exact sums")
	}
	digit := cp.LayerExact[0]
	flipped := digit[:len(digit)-1] + "0"
	if digit[len(digit)-1] == '0' {
		flipped = digit[:len(digit)-1] + "1"
	}
	if err := f.st.Put(
		ctx,
		b.MLPCheckpoint(split, 2),
		bytes.Replace(good, []byte(`"`+digit+`"`), []byte(`"`+flipped+`"`), 1),
	); err != nil {
		t.Fatal(err)
	}

	eng := &countingEngine{}
	a := f.acts(eng)
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	if out.Discarded != 3 || out.Computed != n || out.Reused != 0 || out.Resumed != 0 {
		t.Errorf(
			"%+v, want the 2 results and the checkpoint discarded and all %d MLPs computed",
			out,
			n,
		)
	}
	if _, resumes := eng.count(); len(resumes) != 0 {
		t.Errorf("the engine resumed from %v, want no resume from the damaged checkpoint", resumes)
	}
	got := parquetSHA(t, f.st, out.Prefix)
	want := localParquetSHA(t, n, seed, 0, n)
	if got != want {
		t.Errorf("slice parquet sha256 %s, local bake %s: damaged state was baked in", got, want)
	}
	// The recomputed results replaced the damaged ones.
	again := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	if again.Reused != n || again.Discarded != 0 {
		t.Errorf("a later attempt %+v, want the committed slice reused", again)
	}
	for m := range 2 {
		data, err := f.st.Get(ctx, b.MLPResult(split, m))
		if err != nil {
			t.Errorf("result of MLP %d after recomputing: %v", m, err)
		} else if bytes.Equal(data, ulp) {
			t.Errorf("the damaged result of MLP %d is still stored", m)
		}
	}
}

// testBakeSliceRecomputesADamagedCommit: a slice partial whose manifest was
// damaged is committed again from the results, not taken as the commit.
func testBakeSliceRecomputesADamagedCommit(t *testing.T, f *fixture) {
	ctx := context.Background()
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, "damaged-commit", 3, 17)
	in := sliceInput("damaged-commit", sd, 0, 0, 3)
	first := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	key := keys.Manifest(first.Prefix)
	data, err := f.st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Put(
		ctx,
		key,
		bytes.Replace(data, []byte(`"size": `), []byte(`"size": 1`), 1),
	); err != nil {
		t.Fatal(err)
	}
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	if out.Discarded != 1 || out.Reused != 3 {
		t.Errorf("%+v, want the damaged manifest discarded and the 3 stored results reused", out)
	}
	if got, want := parquetSHA(t, f.st, out.Prefix), localParquetSHA(t, 3, 17, 0, 3); got != want {
		t.Errorf("recommitted parquet sha256 %s, local bake %s", got, want)
	}
}

// testBakeSliceRecommitsASliceUnlikeItsManifest: a committed slice whose
// parquet was rewritten, or deleted, after its commit is checked where a
// restart reuses it: its manifest is discarded (counted), and the partial
// committed again from the stored results, the local bake's bytes. It used
// to be taken as committed on its manifest alone, and the merge refused it
// on every restart.
func testBakeSliceRecommitsASliceUnlikeItsManifest(t *testing.T, f *fixture) {
	ctx := context.Background()
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, "rewritten-slice", 3, 19)
	in := sliceInput("rewritten-slice", sd, 0, 0, 3)
	first := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	var parquet string
	for _, file := range readManifest(t, f.st, first.Prefix).Files {
		if strings.HasSuffix(file.Path, ".parquet") {
			parquet = path.Join(first.Prefix, file.Path)
		}
	}
	for _, spoil := range []struct {
		name string
		do   func() error
	}{
		{"rewritten", func() error {
			data, err := f.st.Get(ctx, parquet)
			if err != nil {
				return err
			}
			data[len(data)/2] ^= 1
			return f.st.Put(ctx, parquet, data)
		}},
		{"deleted", func() error { return f.st.Delete(ctx, parquet) }},
	} {
		t.Run(spoil.name, func(t *testing.T) {
			if err := spoil.do(); err != nil {
				t.Fatal(err)
			}
			out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
			if out.Discarded != 1 || out.Reused != 3 || out.ManifestSHA256 == "" {
				t.Errorf("%+v, want the commit discarded and the 3 stored results reused", out)
			}
			if got, want := parquetSHA(t, f.st, out.Prefix), localParquetSHA(t, 3, 19, 0, 3); got != want {
				t.Errorf("recommitted parquet sha256 %s, local bake %s", got, want)
			}
			if err := f.st.Check(ctx, parquet, parquetSHA(t, f.st, out.Prefix), nil); err != nil {
				t.Errorf("the recommitted parquet is not its manifest's: %v", err)
			}
		})
	}
}

// testBakeSliceRefusesChangedSeeds: the workflow recorded the seeds file's
// sha256; identity blocks of another file are a bad input, not a retry.
func testBakeSliceRefusesChangedSeeds(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	sd := seedSplit(t, a, "changed", 3, 5)
	in := sliceInput("changed", sd, 0, 0, 3)
	in.SeedsSHA256 = strings.Repeat("0", 64)
	_, err := run[bakeapi.BakeSliceOutput](a, a.BakeSlice, in)
	wantAppError(t, err, bakeapi.ErrInvalidSeeds)
}

// testBakeSliceWithoutIdentityBlocks: a split seeded by a release that wrote
// no identity blocks (a bake running across the upgrade) gets them from its
// seeds file, checked against the recorded sha256, and bakes the same bytes.
func testBakeSliceWithoutIdentityBlocks(t *testing.T, f *fixture) {
	ctx := context.Background()
	a := f.acts(gpuengine.CPU{})
	const n, seed = 5, 13
	sd := seedSplit(t, a, "old", n, seed)
	b := keys.Bake("old")
	for _, k := range []string{b.IdentityBlock(split, 0), b.IdentitiesDone(split)} {
		if err := f.st.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	bad := sliceInput("old", sd, 0, 1, 3)
	bad.SeedsKey = path.Join("bakes", "old", "nowhere.json")
	_, err := run[bakeapi.BakeSliceOutput](a, a.BakeSlice, bad)
	wantAppError(t, err, bakeapi.ErrCorruptPartial) // the recorded seeds file is gone

	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sliceInput("old", sd, 0, 1, 3))
	got := parquetSHA(t, f.st, out.Prefix)
	want := localParquetSHA(t, n, seed, 1, 3)
	if got != want {
		t.Errorf(
			"slice baked from rewritten identity blocks: parquet sha256 %s, local bake %s",
			got,
			want,
		)
	}
	if ok, _ := f.st.Exists(ctx, b.IdentityBlock(split, 0)); !ok {
		t.Error("the slice did not write the identity blocks back")
	}
}

// stoppingEngine is the CPU engine that closes stop once call number stopAt
// is halfway through its MLP, like a SIGTERM reaching the worker mid-MLP.
type stoppingEngine struct {
	countingEngine
	stopAt int
	stop   chan struct{}
	once   sync.Once
}

func (s *stoppingEngine) BakeMLP(
	ctx context.Context,
	spec bakeapi.Spec,
	job gpuengine.Job,
	resume *gpuengine.Checkpoint,
	progress gpuengine.Progress,
) (gpuengine.Result, error) {
	call, _ := s.count()
	call++
	return s.countingEngine.BakeMLP(ctx, spec, job, resume, func(cp gpuengine.Checkpoint) {
		progress(cp)
		if call == s.stopAt && cp.SamplesDone >= spec.NSamples/2 {
			s.once.Do(func() { close(s.stop) })
			select { // hold the engine until the worker-stop watcher has cancelled it
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
			}
		}
	})
}

// testBakeSliceStopsForWorkerShutdown: a worker shutting down mid-MLP ends
// the attempt with a retryable WorkerStopping error after saving the MLP's
// checkpoint; the next attempt resumes it and the bits are unchanged.
func testBakeSliceStopsForWorkerShutdown(t *testing.T, f *fixture) {
	eng := &stoppingEngine{stopAt: 2, stop: make(chan struct{})}
	a := f.acts(eng)
	sd := seedSplit(t, a, "stop", 3, 13)
	in := sliceInput("stop", sd, 0, 0, 3)
	_, err := run[bakeapi.BakeSliceOutput](
		a,
		a.BakeSlice,
		in,
		func(env *testsuite.TestActivityEnvironment) { env.SetWorkerStopChannel(eng.stop) },
	)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != bakeapi.ErrWorkerStopping || app.NonRetryable() {
		t.Fatalf("error %v, want a retryable %s", err, bakeapi.ErrWorkerStopping)
	}
	// A planned stop is no error to alert on: the SDK logs a benign
	// failure at debug, and the slice's own line says it was handed back.
	if app.Category() != temporal.ApplicationErrorCategoryBenign {
		t.Errorf("a stop's error has category %v, want benign", app.Category())
	}
	// MLP 0 finished and MLP 1 checkpointed: the split workflow reads that
	// the stop saved progress, and costs the slice no attempt.
	var stop bakeapi.SliceStop
	if err := app.Details(&stop); err != nil ||
		stop != (bakeapi.SliceStop{Attempt: 1, Saved: true}) {
		t.Errorf("stop details %+v (%v), want attempt 1 with progress saved", stop, err)
	}
	ok, err := f.st.Exists(context.Background(), keys.Bake("stop").MLPCheckpoint(split, 1))
	if err != nil || !ok {
		t.Fatalf("no checkpoint saved for the stopped MLP 1 (%v)", err)
	}
	next := &countingEngine{}
	out := mustRun[bakeapi.BakeSliceOutput](t, f.acts(next), f.acts(next).BakeSlice, in)
	if out.Reused != 1 || out.Resumed != 1 || out.Computed != 1 {
		t.Errorf("next attempt %+v, want MLP 0 reused, 1 resumed, 2 computed", out)
	}
	if _, resumes := next.count(); len(resumes) != 1 || resumes[0] < shape.NSamples/2 {
		t.Errorf(
			"next attempt resumed from %v samples, want once from ≥ %d",
			resumes,
			shape.NSamples/2,
		)
	}
	if got, want := parquetSHA(t, f.st, out.Prefix), localParquetSHA(t, 3, 13, 0, 3); got != want {
		t.Errorf("parquet sha256 %s after the stop, local bake %s", got, want)
	}
}

// testBakeSliceRefusesAShapeTooBigForTheWorker: a slice whose rows cannot fit
// in the worker's memory fails at once and for good, before any engine runs,
// instead of crashing every worker that takes it.
func testBakeSliceRefusesAShapeTooBigForTheWorker(t *testing.T, f *fixture) {
	eng := &countingEngine{}
	a := f.acts(eng)
	a.MaxMemory = 1 << 20
	sd := seedSplit(t, a, "too-big", 3, 5)
	_, err := run[bakeapi.BakeSliceOutput](a, a.BakeSlice, sliceInput("too-big", sd, 0, 0, 3))
	app := wantAppError(t, err, bakeapi.ErrInvalidConfig)
	if !strings.Contains(app.Error(), "above the 1.0 MB this process may use") {
		t.Errorf("error %q does not give the limit", app.Error())
	}
	if n, _ := eng.count(); n != 0 {
		t.Errorf("the engine ran %d times", n)
	}
}

// testBakeSliceProtocolV4: a 4.0 slice takes its salt from the worker's
// (Activities.Salt, WHEST_SEED_SALT in a worker process), refuses a missing
// or different one, and writes what a local bake with that salt writes;
// with the salt withheld, no object of the bake holds it.
func testBakeSliceProtocolV4(t *testing.T, f *fixture) {
	const saltHex = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	salt, err := seeds.ParseSalt(saltHex)
	if err != nil {
		t.Fatal(err)
	}
	a := f.acts(&countingEngine{})
	seed := uint64(11)
	sd := mustRun[bakeapi.GenerateSeedsOutput](
		t,
		a,
		a.GenerateSeeds,
		bakeapi.GenerateSeedsInput{
			BakeID:       "v4",
			Split:        split,
			NMLPs:        4,
			Seed:         &seed,
			SeedProtocol: bakeapi.SeedProtocolV4,
		},
	)
	// The control worker has no salt: it writes no names, which would be 3.0 ones.
	if ok, _ := f.st.Exists(context.Background(), keys.Bake("v4").IdentityBlock(split, 0)); ok {
		t.Fatal("GenerateSeeds of a 4.0 split wrote unsalted identity blocks")
	}
	in := sliceInput("v4", sd, 0, 1, 3)
	in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	in.Spec.Salt = bakeapi.Salt{SHA256: salt.Digest(), Withhold: true, ID: "h1"}

	for _, none := range []func() (seeds.Salt, error){nil, withSalt("")} {
		a.Salt = none
		_, err = run[bakeapi.BakeSliceOutput](a, a.BakeSlice, in)
		app := wantAppError(t, err, bakeapi.ErrInvalidConfig)
		if !strings.Contains(app.Error(), "WHEST_SEED_SALT is not set") {
			t.Errorf("no salt: %v", err)
		}
	}
	a.Salt = withSalt("abcd")
	_, err = run[bakeapi.BakeSliceOutput](a, a.BakeSlice, in)
	app := wantAppError(t, err, bakeapi.ErrInvalidConfig)
	if !strings.Contains(app.Error(), "this worker's WHEST_SEED_SALT is 2 bytes") {
		t.Errorf("a short salt: %v", err)
	}
	a.Salt = withSalt(strings.Repeat("a5", 32))
	_, err = run[bakeapi.BakeSliceOutput](a, a.BakeSlice, in)
	app = wantAppError(t, err, bakeapi.ErrInvalidConfig)
	if !strings.Contains(app.Error(), "but the bake's salt has "+salt.Digest()) {
		t.Errorf("another salt: %v", err)
	}

	a.Salt = withSalt(saltHex)
	out := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, in)
	root := uint64(11)
	list, _ := seeds.GenerateInputSeeds(4, &root)
	plan := rows.Plan{
		NMLPs:  4,
		Seeds:  mlps.FromSeeds(list),
		Range:  bakeapi.Range{Start: 1, End: 3},
		Spec:   in.Spec,
		Split:  split,
		Config: "default",
		Salt:   salt,
	}
	local := filepath.Join(t.TempDir(), "local")
	bakeLocally(t, local, plan, list, salt)
	want, err := store.FileSHA256(filepath.Join(local, "data", "public-00000-of-00001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got := parquetSHA(t, f.st, out.Prefix); got != want {
		t.Errorf("4.0 slice parquet %s, local 4.0 bake %s", got, want)
	}
	// The first slice named the split under the salt (the control worker,
	// without it, cannot); the next slice reads those blocks alone, even with
	// the seeds file gone, and still bakes a local 4.0 bake's bytes.
	b := keys.Bake("v4")
	if ok, _ := f.st.Exists(
		context.Background(),
		b.SaltedIdentityBlock(split, salt.Digest(), 0),
	); !ok {
		t.Fatal("the 4.0 slice wrote no salted identity block")
	}
	seedsFile, err := f.st.Get(context.Background(), sd.SeedsKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Delete(context.Background(), sd.SeedsKey); err != nil {
		t.Fatal(err)
	}
	last := sliceInput("v4", sd, 1, 3, 4)
	last.Spec = in.Spec
	out2 := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, last)
	if err := f.st.Put(context.Background(), sd.SeedsKey, seedsFile); err != nil {
		t.Fatal(err)
	}
	plan.Range = bakeapi.Range{Start: 3, End: 4}
	local2 := filepath.Join(t.TempDir(), "local")
	bakeLocally(t, local2, plan, list, salt)
	want2, err := store.FileSHA256(filepath.Join(local2, "data", "public-00000-of-00001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got := parquetSHA(t, f.st, out2.Prefix); got != want2 {
		t.Errorf("4.0 slice from salted blocks: parquet %s, local 4.0 bake %s", got, want2)
	}
	objects, err := f.st.List(context.Background(), "bakes/v4/")
	if err != nil || len(objects) < 5 {
		t.Fatalf("listing the bake: %d objects, %v", len(objects), err)
	}
	for _, k := range objects {
		data, err := f.st.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(string(data)), saltHex) ||
			strings.Contains(string(data), strings.Repeat("Z", 32)) {
			t.Errorf("%s holds the withheld salt", k)
		}
	}
}
