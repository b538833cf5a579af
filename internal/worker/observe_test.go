package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/temporalconn"
)

// dashboard is the Grafana dashboard shipped for the workers.
const dashboard = "../../deploy/grafana/whestbake-dashboard.json"

// TestObservability runs a worker (both roles) with metrics on against a
// real dev server and MinIO, bakes two splits through it, and checks what
// an operator sees: the health endpoints, our metrics and the SDK's on
// /metrics, every metric the Grafana dashboard queries, and JSON log lines
// of slices that carry the bake, split, slice and attempt.
func TestObservability(t *testing.T) {
	o := devtest.Options(t)
	o.Buckets = []string{"whestbake"}
	o = devtest.StartMinIO(t, o)
	o = devtest.StartTemporal(t, o)

	cfg := settings.Default()
	cfg.Temporal.Address = o.TemporalAddr()
	cfg.Temporal.Namespace = devstack.Namespace
	s3 := o.S3Config()
	cfg.S3.Endpoint = s3.Endpoint
	cfg.S3.AccessKey = settings.Secret(s3.AccessKey)
	cfg.S3.SecretKey = settings.Secret(s3.SecretKey)
	cfg.S3.Bucket = "whestbake"
	cfg.Worker.Role = settings.RoleAll
	cfg.Worker.Device = "cpu"
	cfg.Worker.Threads = 1
	// Every engine step: an MLP that ends before its first save saves nothing.
	cfg.Worker.CheckpointEvery = time.Millisecond
	cfg.Worker.MetricsListen = "127.0.0.1:0"

	logs := &devtest.LogBuffer{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		handler := slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})
		done <- Run(ctx, cfg, slog.New(handler))
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	base := "http://" + waitForLog(t, logs, done, "serving metrics", "addr")
	waitForLog(t, logs, done, "worker ready", "role")
	if code, body := get(t, base+"/healthz"); code != 200 || !strings.Contains(body, "running") {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d %s", code, body)
	}

	// A small two-split bake, long enough per MLP to checkpoint.
	cfg.Bake.ID = "observe"
	cfg.Bake.Width = 16
	cfg.Bake.Depth = 3
	cfg.Bake.NSamples = 400_000
	cfg.Bake.SliceSize = 2
	cfg.Bake.MaxInFlight = "2"
	one, two := uint64(1), uint64(2)
	cfg.Bake.Splits = []settings.Split{
		{Name: "public", Config: "default", NMLPs: 3, Seed: &one},
		{Name: "holdout", Config: "holdout", NMLPs: 2, Seed: &two},
	}
	in, err := settings.BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in.Policy.RetryInitial = bakeapi.Duration(time.Second)
	in.Policy.RetryMax = bakeapi.Duration(2 * time.Second)
	c, err := temporalconn.Dial(
		context.Background(),
		cfg.Temporal.Conn(),
		slog.New(slog.DiscardHandler),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	idKey := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeIDAttribute)
	stageKey := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeStageAttribute)
	run, err := c.ExecuteWorkflow(bctx, client.StartWorkflowOptions{
		ID:        bakeapi.BakeWorkflowID(in.BakeID),
		TaskQueue: bakeapi.ControlQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			idKey.ValueSet(in.BakeID),
			stageKey.ValueSet(bakeapi.StageSeeding),
		),
	}, bakeapi.BakeWorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(bctx, nil); err != nil {
		t.Fatalf("bake: %v\nlogs:\n%s", err, logs)
	}

	// Metrics.
	_, text := get(t, base+"/metrics")
	exported := metricNames(text)
	for name, want := range map[string]float64{
		`whestbake_mlps_total{outcome="computed"}`:                  5,
		`whestbake_slices_total{outcome="computed"}`:                3,
		`whestbake_slice_attempts_total{retry="false"}`:             3,
		`whestbake_engine_samples_total{device="cpu",engine="cpu"}`: 5 * 400_000,
		`whestbake_engine_flops_total{device="cpu",engine="cpu"}`:   5 * 400_000 * 2 * 16 * 16 * 3,
		`whestbake_slices_running`:                                  0,
		`whestbake_checkpoint_age_seconds`:                          0,
	} {
		if got, ok := sample(text, name); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if v, ok := sample(text, `whestbake_checkpoints_saved_total`); !ok || v < 1 {
		t.Errorf("whestbake_checkpoints_saved_total = %v: no checkpoint was counted", v)
	}
	if v, ok := sampleLike(text, `whestbake_split_mlps_done{`, `split="public"`); !ok || v != 3 {
		t.Errorf(
			"whestbake_split_mlps_done of public = %v (%v), want 3 (the workflow's gauge)",
			v,
			ok,
		)
	}
	if v, ok := sampleLike(text, `whestbake_device_memory_bytes{`, `device="cpu"`); !ok || v <= 0 {
		t.Errorf("whestbake_device_memory_bytes = %v (%v)", v, ok)
	}
	for _, sdk := range []string{
		"temporal_activity_execution_latency_seconds_bucket",
		"temporal_workflow_completed_total",
		"temporal_request_total",
	} {
		if !exported[sdk] {
			t.Errorf("the SDK metric %s is not exported", sdk)
		}
	}

	// The dashboard asks only for what the workers export.
	for _, m := range dashboardMetrics(t) {
		if !exported[m] && !exported[m+"_bucket"] {
			t.Errorf("the dashboard queries %s, which the worker does not export", m)
		}
	}

	// Every log line of a slice says which one.
	n := 0
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON log line: %s", sc.Text())
		}
		msg, _ := line["msg"].(string)
		if msg == "slice started" || msg == "slice committed" || msg == "MLP done" {
			n++
			for _, k := range []string{"BakeID", "Split", "Slice", "Attempt"} {
				if _, ok := line[k]; !ok {
					t.Errorf("log line without %s: %s", k, sc.Text())
				}
			}
			if line["BakeID"] != "observe" {
				t.Errorf("BakeID = %v: %s", line["BakeID"], sc.Text())
			}
		}
	}
	if n < 3+3+5 {
		t.Errorf(
			"only %d slice log lines; want a start and a commit per slice and a line per MLP",
			n,
		)
	}
}

// waitForLog waits for a JSON log line with msg and returns its field key.
func waitForLog(t *testing.T, logs *devtest.LogBuffer, done chan error, msg, key string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == msg {
				v, _ := line[key].(string)
				return v
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the worker stopped: %v\n%s", err, logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no %q log line after 30s:\n%s", msg, logs)
	return ""
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)`)

// metricNames are the metric names with samples in a Prometheus text page.
func metricNames(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if m := sampleLine.FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// sample is the value of the series written exactly as series (name and
// sorted labels, as the text format prints them).
func sample(text, series string) (float64, bool) {
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			var f float64
			if err := json.Unmarshal([]byte(strings.TrimSpace(v)), &f); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

// sampleLike is the value of the first series starting with prefix and containing label.
func sampleLike(text, prefix, label string) (float64, bool) {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, label) {
			i := strings.LastIndex(l, " ")
			var f float64
			if err := json.Unmarshal([]byte(l[i+1:]), &f); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

// dashboardMetrics are the metric names the dashboard's queries use: the
// identifiers of its PromQL expressions that look like ours or the SDK's.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboard, err)
	}
	ident := regexp.MustCompile(`\b(whestbake_[a-z0-9_]+|temporal_[a-z0-9_]+)\b`)
	seen := map[string]bool{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range ident.FindAllString(tg.Expr, -1) {
				// Histogram series names stand for their histogram.
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					m = strings.TrimSuffix(m, suf)
				}
				seen[m] = true
			}
		}
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	if len(out) < 8 {
		t.Fatalf("the dashboard queries only %v", out)
	}
	return out
}
