package activities_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// BenchmarkMergeSplit is the merge of a split of n one-MLP slices of a tiny
// shape (W=4 D=1 N=256), through the real MergeSplit against a private
// MinIO, in one process. Each slice's partial is committed by the code
// BakeSlice commits with, its row baked by the same engine call as a local
// bake's (running BakeSlice itself 100,000 times would take an hour); the
// merged parquet file must be byte-identical to a local bake of the split.
// Reported: the merge's wall time, this process's CPU (user + system) and
// MinIO's, the peak RSS of this process during the merge (the kernel's
// high-water mark, reset before it), and the S3 requests MinIO counted, by
// API. Each iteration bakes its own split, so run it once:
//
//	go test ./activities -run '^$' -bench MergeSplit -benchtime 1x -timeout 2h
func BenchmarkMergeSplit(b *testing.B) {
	// MinIO inherits this and serves its request counters without a token.
	b.Setenv("MINIO_PROMETHEUS_AUTH_TYPE", "public")
	cfg, bucket := devtest.StartStore(b)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		b.Fatal(err)
	}
	spec := bakeapi.Spec{
		Width:    4,
		Depth:    1,
		NSamples: 256,
		Sampler:  "philox",
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			a := &activities.Activities{
				Store:   st,
				Engine:  gpuengine.CPU{},
				Threads: 1,
				TempDir: b.TempDir(),
			}
			run := 0
			for b.Loop() {
				b.StopTimer()
				run++
				bakeID := fmt.Sprintf("merge-%d-%d", n, run)
				want := commitOneMLPSlices(b, a, bakeID, n, spec)
				slices0, err := st.Usage(ctx, keys.Bake(bakeID).Slices(split))
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				debug.FreeOSMemory()
				resetPeakRSS(b)
				req0 := minioCounters(b, cfg.Endpoint)
				t0, c0 := time.Now(), cpuTime()
				b.StartTimer()
				// Called directly: the test environment times an activity out
				// after 10 minutes, which a loaded VM's 100,000 slices exceed.
				out, err := a.MergeSplit(
					ctx,
					bakeapi.MergeSplitInput{
						BakeID:  bakeID,
						Split:   split,
						NMLPs:   n,
						NSlices: n,
					},
				)
				b.StopTimer()
				wall, cpu, rss := time.Since(t0), cpuTime()-c0, peakRSS(b)
				req1 := minioCounters(b, cfg.Endpoint)
				if err != nil {
					b.Fatal(err)
				}
				if got := mergedParquetSHA(b, st, out.Prefix); out.NMLPs != n || got != want {
					b.Fatalf(
						"merged %d MLPs, parquet sha256 %s; want %d MLPs and the local bake's %s",
						out.NMLPs,
						got,
						n,
						want,
					)
				}
				if u, err := st.Usage(ctx, keys.Bake(bakeID).Slices(split)); err != nil ||
					u.Objects != 0 {
					b.Fatalf("the slices outlived the merge: %+v, %v", u, err)
				}
				merged, err := st.Usage(ctx, out.Prefix+"/")
				if err != nil {
					b.Fatal(err)
				}
				b.Logf(
					"storage: %d slices hold %d objects, %d bytes (%d per slice); "+
						"the merged split %d bytes; the merge peaks at %.1fx the split",
					n,
					slices0.Objects,
					slices0.Bytes,
					slices0.Bytes/int64(n),
					merged.Bytes,
					float64(slices0.Bytes+merged.Bytes)/float64(merged.Bytes),
				)
				var apis []string
				total := 0.0
				for api, c := range req1 {
					if d := c - req0[api]; d > 0 && api != "cpu" {
						apis = append(apis, fmt.Sprintf("%s %.0f", api, d))
						total += d
					}
				}
				slices.Sort(apis)
				b.Logf(
					"MergeSplit of %d one-MLP slices: %s wall, %s CPU here, %.1f s CPU in MinIO, "+
						"peak RSS %d MiB, %.0f S3 requests (%.2f per slice: %s)",
					n,
					wall.Round(time.Millisecond),
					cpu.Round(time.Millisecond),
					req1["cpu"]-req0["cpu"],
					rss>>20,
					total,
					total/float64(n),
					strings.Join(apis, ", "),
				)
				b.ReportMetric(float64(rss>>20), "peak-RSS-MiB")
				b.ReportMetric(total/float64(n), "S3-requests/slice")
				b.StartTimer()
			}
		})
	}
}

// commitOneMLPSlices generates the seeds of an n-MLP split with the real
// GenerateSeeds and commits its n one-MLP slices, then returns the sha256
// of the parquet file a local bake of the whole split writes.
func commitOneMLPSlices(
	b *testing.B,
	a *activities.Activities,
	bakeID string,
	n int,
	spec bakeapi.Spec,
) string {
	ctx := context.Background()
	seed := uint64(n)
	sd := mustRunB[bakeapi.GenerateSeedsOutput](b, a, a.GenerateSeeds, seedsInput(bakeID, n, seed))
	data, err := a.Store.Get(ctx, sd.SeedsKey)
	if err != nil {
		b.Fatal(err)
	}
	sf, err := mlps.ParseSeeds(sd.SeedsKey, data, n)
	if err != nil {
		b.Fatal(err)
	}
	ids := mlps.Identities(sf.Seeds, seeds.Salt{})
	createdAt := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	desc := a.Engine.Describe()
	t0 := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for k := range n {
		g.Go(func() error {
			plan := rows.Plan{
				NMLPs:  n,
				Seeds:  mlps.SeedFile{SHA256: sd.SHA256},
				Range:  bakeapi.Range{Start: k, End: k + 1},
				Spec:   spec,
				Split:  split,
				Config: "default",
			}
			row, err := rows.Baker{Engine: a.Engine, Spec: spec, Threads: 1}.Row(gctx, ids[k], nil)
			if err != nil {
				return err
			}
			_, err = activities.CommitPartial(
				a,
				gctx,
				keys.Bake(bakeID).Slice(split, k),
				rows.Metadata(plan, desc, createdAt),
				spec,
				seal.Seal{Bake: bakeID, Split: split},
				func(write func(dataset.Row) error) error { return write(row) },
			)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	b.Logf("committed %d one-MLP slices in %s", n, time.Since(t0).Round(time.Second))
	local := filepath.Join(b.TempDir(), "local")
	plan := rows.Plan{
		NMLPs:  n,
		Seeds:  sf,
		Spec:   spec,
		Split:  split,
		Config: "default",
	}
	baker := rows.Baker{Engine: a.Engine, Spec: spec, Threads: 2}
	stream := func(write func(dataset.Row) error) error {
		return baker.Stream(ctx, ids, bakeapi.Range{Start: 0, End: n}, write)
	}
	err = dataset.WriteDirStream(local, rows.Metadata(plan, desc, createdAt), spec, stream)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := store.FileSHA256(filepath.Join(local, "data", split+"-00000-of-00001.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	return sum
}

// mustRunB is mustRun for a benchmark.
func mustRunB[Out any](b *testing.B, a *activities.Activities, method, in any) Out {
	b.Helper()
	var out Out
	v, err := activityEnv(a).ExecuteActivity(method, in)
	if err == nil {
		err = v.Get(&out)
	}
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// mergedParquetSHA is the sha256 the merged split's manifest records for its
// one parquet file.
func mergedParquetSHA(b *testing.B, st *store.Store, prefix string) string {
	m, _, err := manifest.Read(context.Background(), st, prefix)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range m.Files {
		if strings.HasSuffix(f.Path, ".parquet") {
			return f.SHA256
		}
	}
	b.Fatalf("%s: no parquet file in the manifest", prefix)
	return ""
}

// resetPeakRSS resets the kernel's high-water mark of this process's RSS.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// peakRSS is this process's RSS high-water mark in bytes.
func peakRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// minioCounters reads MinIO's S3 requests by API and its CPU seconds (as
// "cpu") from its Prometheus endpoints.
func minioCounters(b *testing.B, endpoint string) map[string]float64 {
	out := map[string]float64{}
	for _, path := range []string{"/minio/metrics/v3/api/requests", "/minio/v2/metrics/node"} {
		resp, err := http.Get("http://" + endpoint + path)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			name, labels, value := parseSample(line)
			switch name {
			case "minio_api_requests_total":
				if api, ok := label(labels, "name"); ok {
					out[api] = value
				}
			case "minio_process_cpu_seconds_total":
				out["cpu"] = value
			}
		}
		resp.Body.Close()
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// parseSample splits a Prometheus text line `name{labels} value`.
func parseSample(line string) (name, labels string, value float64) {
	if strings.HasPrefix(line, "#") {
		return "", "", 0
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", "", 0
	}
	value, _ = strconv.ParseFloat(line[i+1:], 64)
	name = line[:i]
	if j := strings.IndexByte(name, '{'); j >= 0 {
		name, labels = name[:j], name[j+1:len(name)-1]
	}
	return name, labels, value
}

// label is the value of key in a Prometheus label list.
func label(labels, key string) (string, bool) {
	for kv := range strings.SplitSeq(labels, ",") {
		if v, ok := strings.CutPrefix(kv, key+"=\""); ok {
			return strings.TrimSuffix(v, "\""), true
		}
	}
	return "", false
}
