package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/temporalconn"
	"github.com/whestbake/whestbake/internal/worker"
)

// The starter verbs against a real Temporal dev server and MinIO, with an
// in-process worker: bake --wait, the refusals, status, list, cancel and
// download. Skipped under -short (it needs `make tools`).
func TestStarterVerbsOnDevStack(t *testing.T) {
	o := startDevStack(t, devstack.ArtifactsBucket, devstack.ReleasesBucket)
	dir := t.TempDir()
	cfgFile := writeFile(t, filepath.Join(dir, "c.yaml"), starterConfigYAML+`
release: {bucket: releases, prefix: ds, name: unit, tag: v1}
`+workerConfigYAML)
	var logs devtest.LogBuffer
	cfg := startWorker(t, cfgFile, &logs)

	out := mustRun(t, "bake", "--config-file", cfgFile, "--id", "e1", "--wait")
	// No temporal.ui, and no dev stack recorded here: the link is unknown,
	// and said so, rather than a guess at port 8233.
	for _, want := range []string{
		"Started bake e1",
		"Web UI: unknown for " + o.TemporalAddr() + " (set temporal.ui",
		"✓ Bake e1 done",
		"release  s3://releases/ds/unit/v1/",
		" bake e1: running, stage ",
		" split public: done, 3/3 MLPs, 2/2 slices\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bake output lacks %q:\n%s", want, out)
		}
	}
	// Not a terminal: one line per change, never a redrawn block.
	if n := strings.Count(out, "split public: done"); n != 1 || strings.Contains(out, ".0/") {
		t.Errorf("bake --wait repeats itself or shows fractional MLPs:\n%s", out)
	}
	code, _, errs := run(t, "bake", "--config-file", cfgFile, "--id", "e1")
	if code != 1 || !strings.Contains(errs, "bake e1 already completed") {
		t.Errorf("re-bake of a completed id: exit %d\n%s", code, errs)
	}
	out = mustRun(t, "status", "e1", "--config-file", cfgFile)
	for _, want := range []string{
		"Bake e1: COMPLETED, stage done",
		"public           done      3/3         2/2",
		"holdout          done      2/2         1/1",
		"release  s3://releases/ds/unit/v1/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if got := statusCounts(t, out, "public"); got != [3]int{3, 0, 0} {
		t.Errorf("public computed/resumed/reused = %v, want [3 0 0]:\n%s", got, out)
	}
	out = mustRun(t, "list", "--config-file", cfgFile)
	if !strings.Contains(out, "e1") || !strings.Contains(out, "completed") {
		t.Errorf("list:\n%s", out)
	}
	code, _, errs = run(t, "cancel", "e1", "--config-file", cfgFile)
	if code != 1 || !strings.Contains(errs, "bake e1 is not running (it completed)") {
		t.Errorf("cancel of a completed bake: exit %d\n%s", code, errs)
	}

	// A second bake publishing to the same tag is refused before it starts.
	code, out, errs = run(t, "bake", "--config-file", cfgFile, "--id", "e2", "--wait")
	if code != 1 ||
		!strings.Contains(errs, `release.tag "v1"`) ||
		!strings.Contains(errs, "choose another release.tag") {
		t.Errorf("conflicting release: exit %d\n%s%s", code, out, errs)
	}

	release := filepath.Join(dir, "out", "release")
	mustRun(t, "dataset", "download", "s3://releases/ds/unit/v1",
		"--output", release, "--config-file", cfgFile)
	ds, err := dataset.ReadDir(release, false)
	if err != nil {
		t.Fatalf("the downloaded release is not a valid dataset: %v", err)
	}
	if len(ds.Splits) != 2 ||
		ds.Splits[0].Name != "public" || len(ds.Splits[0].Rows) != 3 ||
		ds.Splits[1].Name != "holdout" || len(ds.Splits[1].Rows) != 2 {
		t.Errorf("downloaded dataset has the wrong splits: %+v", ds.Splits)
	}
	code, _, errs = run(t, "dataset", "download", "s3://releases/ds/unit/v1",
		"--output", release, "--config-file", cfgFile)
	if code != 1 || !strings.Contains(errs, release) {
		t.Errorf("download over an existing directory: exit %d\n%s", code, errs)
	}
	bakeCopy := filepath.Join(dir, "out", "bake")
	mustRun(t, "dataset", "download", "bake:e1", "--output", bakeCopy, "--config-file", cfgFile)
	for _, f := range []string{
		"metadata.json",
		"data/public-00000-of-00001.parquet",
		"data/holdout-00000-of-00001.parquet",
		"report/index.html",
		"report/final_means.png",
	} {
		released := readBytes(t, filepath.Join(release, f))
		if !bytes.Equal(released, readBytes(t, filepath.Join(bakeCopy, f))) {
			t.Errorf("%s differs between the release and the bake's dataset", f)
		}
	}

	// Cancelled halfway: status shows what finished, what was stopped, and
	// exits 0; the restart reuses what finished.
	slow := writeFile(t, filepath.Join(dir, "slow.yaml"), slowConfigYAML)
	mustRun(t, "bake", "--config-file", slow, "--id", "c1")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out := mustRun(t, "status", "c1", "--config-file", slow)
		if finished, _ := statusMLPs(t, out, "public"); finished >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no MLP finished in 2 minutes:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mustRun(t, "cancel", "c1", "--config-file", slow)
	code, out, errs = run(t, "watch", "c1", "--config-file", slow, "--interval", "200ms")
	if code != 0 {
		t.Fatalf("watch of a cancelled bake: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "status", "c1", "--config-file", slow)
	if code != 0 {
		t.Errorf("status of a cancelled bake: exit %d\n%s", code, errs)
	}
	for _, want := range []string{
		"Bake c1: CANCELED",
		"Canceled during stage baking. Running then, and stopped:",
		"split public: ",
		"Finished MLPs stay in S3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status after cancel lacks %q:\n%s", want, out)
		}
	}
	finished, total := statusMLPs(t, out, "public")
	counts := statusCounts(t, out, "public")
	if finished < 1 || finished >= total ||
		counts[0]+counts[1]+counts[2] != finished ||
		!strings.Contains(out, "public           canceled") {
		t.Errorf("after cancel: %d/%d MLPs, counts %v; "+
			"want the finished slices' MLPs, counted:\n%s", finished, total, counts, out)
	}
	// Restarted where no GPU worker polls its queue, its run has reused
	// nothing yet: status still counts what the cancelled run finished.
	t.Setenv("WHESTBAKE_BAKE_GPU_QUEUE", "nobody-polls-this")
	mustRun(t, "bake", "--config-file", slow, "--id", "c1")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		out = mustRun(t, "status", "c1", "--config-file", slow)
		if strings.Contains(out, "public           baking") || time.Now().After(deadline) {
			break
		}
	}
	got, _ := statusMLPs(t, out, "public")
	if got != finished || !strings.Contains(out, "public           baking") {
		t.Errorf("restart that no worker serves: %d MLPs, want the %d finished before:\n%s",
			got, finished, out)
	}
	mustRun(t, "cancel", "c1", "--config-file", slow)
	t.Setenv("WHESTBAKE_BAKE_GPU_QUEUE", "")
	// And restarted for real, bake --wait's first line counts them too.
	out = mustRun(t, "bake", "--config-file", slow, "--id", "c1", "--wait")
	if got := firstSplitMLPs(t, out, "public"); got < finished {
		t.Errorf("bake --wait of the restart begins at %d MLPs, below the %d finished before:\n%s",
			got, finished, out)
	}
	out = mustRun(t, "status", "c1", "--config-file", slow)
	if got := statusCounts(t, out, "public"); got[2] < finished || got[0]+got[1]+got[2] != 6 {
		t.Errorf("restart after %d finished MLPs: computed/resumed/reused %v, "+
			"want at least %d reused of 6:\n%s", finished, got, finished, out)
	}

	// Seed protocol 4.0 with a withheld salt: the salt reaches the workers
	// through their environment only, so no history, object or file holds
	// it; weights and statistics are the 3.0 bake's, the names are not. The
	// bake keeps its intermediates (salted identity blocks, per-MLP results,
	// partials) so that every object it wrote is searched for the salt.
	t.Setenv(dataset.SaltEnv, v4Salt)
	t.Setenv("WHESTBAKE_BAKE_KEEP_INTERMEDIATES", "true")
	t.Setenv("WHESTBAKE_BAKE_SEED_PROTOCOL", "4.0")
	t.Setenv("WHESTBAKE_BAKE_WITHHOLD_SALT", "true")
	t.Setenv("WHESTBAKE_BAKE_SALT_ID", "holdout-e3")
	t.Setenv("WHESTBAKE_RELEASE_TAG", "v4")
	out = mustRun(t, "bake", "--config-file", cfgFile, "--id", "e3", "--wait")
	withheld := "Seed protocol 4.0, salt SHA-256 " + v4SaltDigest + " (withheld, id holdout-e3"
	if !strings.Contains(out, withheld) || strings.Contains(out, v4Salt) {
		t.Errorf("4.0 bake output:\n%s", out)
	}
	v4Dir := filepath.Join(dir, "out", "v4")
	mustRun(t, "dataset", "download", "s3://releases/ds/unit/v4",
		"--output", v4Dir, "--config-file", cfgFile)
	assertNoSalt(t, v4Salt, v4Dir)
	d4 := readDataset(t, v4Dir, false)
	p := d4.Info.SeedProtocol
	if !p.SaltWithheld() || p.SaltDigest != v4SaltDigest || p.SaltID != "holdout-e3" {
		t.Errorf("4.0 seed protocol %+v", p)
	}
	renamed := 0
	for i, sd := range d4.Splits {
		for j, r := range sd.Rows {
			old := ds.Splits[i].Rows[j]
			if r.Name != old.Name {
				renamed++
			}
			r.Name = ""
			old.Name = ""
			if !datasettest.SameRow(r, old) {
				t.Errorf("split %s row %d: 4.0 data differs from the 3.0 bake's", sd.Name, j)
			}
		}
	}
	if renamed == 0 {
		t.Error("4.0 names equal the 3.0 names")
	}
	v := mustRun(t, "dataset", "verify", v4Dir, "--mlps", "all")
	if strings.Count(v, "name ok") != 5 {
		t.Errorf("verify of the 4.0 release:\n%s", v)
	}
	st, err := store.Open(context.Background(), cfg.StoreConfig(), cfg.S3.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := st.List(context.Background(), "bakes/e3/")
	if err != nil || len(objects) < 10 {
		t.Fatalf("bake e3 objects: %d, %v", len(objects), err)
	}
	salted := 0
	for _, k := range objects {
		if strings.Contains(k, "/identities/salt-") {
			salted++
		}
	}
	if salted != 2 {
		t.Errorf("bake e3 has %d salted identity blocks, want one per split", salted)
	}
	for _, k := range objects {
		data, err := st.Get(context.Background(), k)
		if err != nil || bytes.Contains(bytes.ToLower(data), []byte(v4Salt)) {
			t.Errorf("%s holds the salt (%v)", k, err)
		}
	}

	if strings.Contains(logs.String(), starterSecret) || strings.Contains(logs.String(), v4Salt) {
		t.Error("the worker logged the S3 secret or the salt")
	}
	assertHistoriesClean(t, cfg, []string{starterSecret, v4Salt},
		"bake/e1", "bake/e1/split/public", "bake/e1/split/holdout",
		"bake/e3", "bake/e3/split/public", "bake/e3/split/holdout")
}

// startDevStack starts a private MinIO with buckets and a Temporal dev
// server, and points the starter's config at them (and at nothing else:
// isolate).
func startDevStack(t *testing.T, buckets ...string) devstack.Options {
	o := devtest.Options(t)
	isolate(t)
	o.SecretKey = starterSecret
	o.Buckets = buckets
	o = devtest.StartMinIO(t, o)
	o = devtest.StartTemporal(t, o)
	t.Setenv("WHESTBAKE_TEMPORAL_ADDRESS", o.TemporalAddr())
	t.Setenv("WHESTBAKE_S3_ENDPOINT", o.S3Config().Endpoint)
	t.Setenv("WHESTBAKE_S3_ACCESS_KEY", o.AccessKey)
	return o
}

// workerConfigYAML makes a quick in-process worker of both roles.
const workerConfigYAML = `
policy: {retry-initial: 100ms, retry-max: 1s, slice-heartbeat: 5s}
worker: {role: all, device: cpu, threads: 1, checkpoint-every: 100ms}
`

// startWorker runs a worker of cfgFile's config, logging to logs, until
// the test ends, and returns the config.
func startWorker(t *testing.T, cfgFile string, logs io.Writer) settings.Config {
	cfg, err := settings.Load(cfgFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil))) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	return cfg
}

// firstSplitMLPs is the MLPs done in the first line bake --wait printed
// for split (without a terminal: "  split S: STAGE, N/M MLPs, …").
func firstSplitMLPs(t *testing.T, out, split string) int {
	t.Helper()
	line := regexp.MustCompile(`(?m)^\S+   split ` + split + `: \S+, (\d+)/\d+ MLPs`)
	m := line.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line of split %s:\n%s", split, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// statusRow is the fields of split's row in status output.
func statusRow(t *testing.T, out, split string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 7 && f[0] == split {
			return f
		}
	}
	t.Fatalf("status has no row for split %s:\n%s", split, out)
	return nil
}

// statusMLPs is split's finished and total MLPs in status output.
func statusMLPs(t *testing.T, out, split string) (done, total int) {
	t.Helper()
	if _, err := fmt.Sscanf(statusRow(t, out, split)[2], "%d/%d", &done, &total); err != nil {
		t.Fatalf("status row of %s: %v\n%s", split, err, out)
	}
	return done, total
}

// statusCounts is split's computed, resumed and reused MLPs in status output.
func statusCounts(t *testing.T, out, split string) [3]int {
	t.Helper()
	f := statusRow(t, out, split)
	// SPLIT STAGE MLPS SLICES [(n running)] COMPUTED RESUMED REUSED ETA
	i := 4
	if strings.HasPrefix(f[i], "(") {
		i += 2
	}
	var c [3]int
	for k := range c {
		if _, err := fmt.Sscan(f[i+k], &c[k]); err != nil {
			t.Fatalf("status row of %s has no counts (%v):\n%s", split, err, out)
		}
	}
	return c
}

// assertHistoriesClean looks for the secrets in the raw bytes of every event
// (payloads are JSON inside the protobuf, so a leak would show verbatim).
func assertHistoriesClean(t *testing.T, cfg settings.Config, secrets []string, ids ...string) {
	c, err := temporalconn.Dial(context.Background(), cfg.Temporal.Conn(),
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, id := range ids {
		it := c.GetWorkflowHistory(context.Background(), id, "", false,
			enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		n := 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			raw, err := proto.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range secrets {
				if bytes.Contains(raw, []byte(secret)) {
					t.Errorf("%s: event %d (%s) holds a secret",
						id, ev.GetEventId(), ev.GetEventType())
				}
			}
			n++
		}
		if n < 3 {
			t.Errorf("%s: only %d events; the check proves nothing", id, n)
		}
	}
}
