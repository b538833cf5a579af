package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/settings"
)

// starterSecret stands for a real credential: no output may contain it.
const starterSecret = "starter-Secret-9f3k-never-print"

// isolate clears WHESTBAKE_* and points every server at a closed port, so a
// test that connects by mistake fails loudly instead of reaching a dev stack.
func isolate(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "WHESTBAKE_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("WHESTBAKE_TEMPORAL_ADDRESS", "127.0.0.1:1")
	t.Setenv("WHESTBAKE_S3_ENDPOINT", "127.0.0.1:1")
	t.Setenv("WHESTBAKE_S3_ACCESS_KEY", "user")
	t.Setenv("WHESTBAKE_S3_SECRET_KEY", starterSecret)
}

const starterConfigYAML = `
bake:
  id: unit
  width: 8
  depth: 2
  n-samples: 2_000
  slice-size: 2
  splits:
    - {name: public, n-mlps: 3, seed: 1}
    - {name: holdout, config: holdout, n-mlps: 2, seed: 2}
`

// slowConfigYAML is a bake whose MLPs take a moment each, one at a time:
// it is still running when a test cancels it after its first slice.
const slowConfigYAML = `
bake:
  width: 8
  depth: 2
  n-samples: 1e7
  slice-size: 1
  max-in-flight: 1
  splits:
    - {name: public, n-mlps: 6, seed: 3}
`

func TestStarterValidatesBeforeConnecting(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	spoiled := strings.Replace(starterConfigYAML, "slice-size: 2", "slice-size: 0", 1) +
		"release: {bucket: releases, name: demo}\n"
	bad := writeFile(t, filepath.Join(dir, "bad.yaml"), spoiled)
	// A bad --id is a bad flag value (exit 2), reported with every other problem.
	code, out, errs := run(t, "bake", "--config-file", bad, "--id", "x/y")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, want := range []string{
		"invalid configuration (3 problems)",
		`bake.id "x/y" is not usable`,
		"bake.slice-size = 0",
		"release.tag is empty",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out+errs, starterSecret) || strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("printed the secret or tried to connect:\n%s%s", out, errs)
	}
}

func TestStarterReportsUnreachableStore(t *testing.T) {
	isolate(t)
	good := writeFile(t, filepath.Join(t.TempDir(), "c.yaml"), starterConfigYAML)
	start := time.Now()
	t.Setenv("WHESTBAKE_CONFIG_FILE", good) // the variable stands for --config-file
	code, out, errs := run(t, "bake")
	if code != 1 || !strings.Contains(errs, "cannot reach the S3 endpoint 127.0.0.1:1") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s to notice an unreachable store", d)
	}
	if strings.Contains(out+errs, starterSecret) {
		t.Errorf("printed the secret:\n%s", errs)
	}
}

// The dev stack's record is read only for a server the config leaves
// out: with both named, a FIFO at .whestbake/stack.json (which a read
// would wait on forever) is never opened, and the verb goes on to its
// servers.
func TestStarterNamingBothServersReadsNoRecord(t *testing.T) {
	isolate(t)
	t.Chdir(t.TempDir())
	if err := os.Mkdir(".whestbake", 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(".whestbake", "stack.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code int
		errs string
	}
	done := make(chan result, 1)
	go func() {
		code, _, errs := run(t, "status", "some-bake")
		done <- result{code, errs}
	}()
	select {
	case r := <-done:
		if r.code != 1 || strings.Contains(r.errs, "stack.json") ||
			!strings.Contains(r.errs, "127.0.0.1:1") {
			t.Errorf("exit %d, want the connection to the configured server refused:\n%s",
				r.code, r.errs)
		}
	case <-time.After(time.Minute):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close() // lets the blocked read end with the test
		}
		t.Fatal("`whestbake status` hangs on a FIFO at .whestbake/stack.json")
	}
}

// --config is the HF config name on the dataset verbs; a YAML file passed with
// it gets the flag that takes one.
func TestStarterRefusesConfigFlag(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"bake", "--config", "f.yaml"},
		{"status", "x", "--config", "f.yaml"},
		{"list", "--config=f.yaml"},
		{"dataset", "download", "bake:x", "-o", "d", "--config", "f.yaml"},
	} {
		code, _, errs := run(t, args...)
		if code != 2 || !strings.Contains(errs, "takes its config file as --config-file FILE") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errs)
		}
	}
}

func TestDownloadSource(t *testing.T) {
	cfg := settings.Default()
	for _, c := range []struct{ src, bucket, prefix, err string }{
		{"s3://releases/datasets/demo/v1", "releases", "datasets/demo/v1", ""},
		{"s3://releases/datasets/demo/v1/", "releases", "datasets/demo/v1", ""},
		{"bake:demo-7", "whestbake", "bakes/demo-7/dataset", ""},
		{"bake:", "", "", "write bake:ID"},
		// The ID is checked as bake --id checks it: ".." reads bakes/../dataset.
		{"bake:..", "", "", "is not usable"},
		{"bake:.hidden", "", "", "is not usable"},
		{"bake:" + strings.Repeat("x", 300), "", "", "is not usable"},
		{"s3://releases", "", "", "with a path after the bucket"},
		{"s3://releases/a/../b", "", "", "with a path after the bucket"},
		{"releases/demo/v1", "", "", "SRC is hf://OWNER/NAME[@REVISION] (the Hugging Face Hub), " +
			"s3://BUCKET/PREFIX/NAME/TAG (a release) or bake:ID"},
		// whestbench's form of a Hub repository.
		{"AIcrowd/whestbench-public", "", "", "whestbake writes it hf://AIcrowd/whestbench-public"},
	} {
		b, p, err := downloadSource(c.src, cfg)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.src, err, c.err)
		case c.err == "" && (err != nil || b != c.bucket || p != c.prefix):
			t.Errorf("%s: got %q %q %v, want %q %q", c.src, b, p, err, c.bucket, c.prefix)
		}
	}
}

func TestDownloadRefusesExistingOutput(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	code, _, errs := run(t, "dataset", "download", "bake:x", "--output", dir)
	if code != 1 || !strings.Contains(errs, dir) || strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}

func TestProgressLines(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// 2 MLPs from finished slices, plus a running slice with 1 MLP done and
	// the next half-way: 3.5 of 7, so 12 of 24 bar cells, and as long
	// again as the 30 s the split has run.
	split := bakeclient.Split{
		Name:          "public",
		Stage:         bakeapi.StageBaking,
		MLPsDone:      2,
		MLPsTotal:     7,
		SlicesDone:    1,
		SlicesTotal:   3,
		SlicesRunning: 1,
		StartedAt:     now.Add(-30 * time.Second),
		Running: []bakeclient.RunningSlice{{
			MLPsDone:    1,
			MLPsTotal:   3,
			SamplesDone: 500,
			SamplesEach: 1000,
		}},
	}
	st := bakeclient.Status{
		ID:     "b",
		State:  "unspecified",
		Stage:  bakeapi.StageBaking,
		Start:  now.Add(-90 * time.Second),
		Splits: []bakeclient.Split{split},
	}
	lines := progressLines(st, now)
	want := "  public       " + strings.Repeat("█", 12) + strings.Repeat("░", 12) +
		"   3.5/7 MLPs  baking    slices 1/3 (1 running)  ETA 30.0s"
	if len(lines) != 2 || lines[1] != want {
		t.Errorf("got\n%q\nwant\n%q", lines, want)
	}
	if !strings.HasPrefix(lines[0], "bake b: unspecified, stage baking, 1m 30s") {
		t.Errorf("header %q", lines[0])
	}
}
