package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/settings"
)

const secret = "worker-Secret-77x-never-print"

func TestRunValidatesFirst(t *testing.T) {
	cfg := settings.Default()
	cfg.S3.AccessKey = "user"
	cfg.S3.SecretKey = secret
	err := Run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "worker.role is not set: pass --role control") {
		t.Fatalf("Run without a role: %v", err)
	}
}

// A worker that cannot reach its store fails at once, names the endpoint,
// and neither its error nor its log shows the secret.
func TestRunFailsFastWithoutLeakingTheSecret(t *testing.T) {
	cfg := settings.Default()
	cfg.S3.Endpoint = "127.0.0.1:1"
	cfg.Temporal.Address = "127.0.0.1:1"
	cfg.S3.AccessKey = "user"
	cfg.S3.SecretKey = secret
	cfg.Worker.Role = settings.RoleAll
	var logs bytes.Buffer
	err := Run(context.Background(), cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err == nil || !strings.Contains(err.Error(), "cannot reach the S3 endpoint 127.0.0.1:1") {
		t.Fatalf("Run with no store: %v", err)
	}
	if strings.Contains(err.Error()+logs.String(), secret) {
		t.Errorf("the secret leaked:\n%v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), `"credentials":"set"`) {
		t.Errorf("the log does not say credentials are set:\n%s", logs.String())
	}
}

// The worker refuses a scratch directory it cannot write before it
// connects to anything, and logs the one it takes with its free space.
func TestRunChecksAndReportsItsScratchDirectory(t *testing.T) {
	cfg := settings.Default()
	cfg.S3.Endpoint = "127.0.0.1:1"
	cfg.Temporal.Address = "127.0.0.1:1"
	cfg.S3.AccessKey = "user"
	cfg.S3.SecretKey = secret
	cfg.Worker.Role = settings.RoleControl
	cfg.Worker.ScratchDir = filepath.Join(t.TempDir(), "missing")
	var logs bytes.Buffer
	err := Run(context.Background(), cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err == nil ||
		!strings.Contains(
			err.Error(),
			`worker.scratch-dir "`+cfg.Worker.ScratchDir+`" does not exist`,
		) {
		t.Fatalf("Run with a missing scratch directory: %v", err)
	}
	cfg.Worker.ScratchDir = t.TempDir()
	logs.Reset()
	_ = Run(context.Background(), cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	var line struct {
		Msg       string `json:"msg"`
		Dir       string `json:"dir"`
		FreeBytes int64  `json:"free_bytes"`
	}
	for l := range strings.Lines(logs.String()) {
		if json.Unmarshal([]byte(l), &line) == nil && line.Msg == "scratch directory" {
			break
		}
	}
	if line.Msg != "scratch directory" || line.Dir != cfg.Worker.ScratchDir || line.FreeBytes <= 0 {
		t.Errorf(
			"start-up log: %+v, want the scratch directory %s with its free space:\n%s",
			line,
			cfg.Worker.ScratchDir,
			logs.String(),
		)
	}
}

func TestCommandRejectsBadFlags(t *testing.T) {
	t.Setenv("WHESTBAKE_S3_ACCESS_KEY", "user")
	t.Setenv("WHESTBAKE_S3_SECRET_KEY", secret)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--role", "gpu", "--device", "tpu"}, 1, `worker.device "tpu" is unknown`},
		{[]string{"--role", "boss"}, 1, `worker.role "boss" is unknown: use control, gpu or all`},
		{[]string{"--role", "gpu", "--threads", "-2"}, 1, "worker.threads = -2"},
		{[]string{"--role", "gpu", "--log-format", "xml"}, 2, `--log-format "xml" unknown`},
		{
			[]string{"--role", "gpu", "--config", "w.yaml"},
			2,
			"whestbake-worker takes its config file as --config-file FILE",
		},
		{
			[]string{"--role", "gpu", "--config-file", "/nonexistent/w.yaml"},
			1,
			"/nonexistent/w.yaml",
		},
		{
			[]string{"--role", "gpu", "--threads", "many"},
			2,
			`invalid argument "many" for "--threads"`,
		},
		{[]string{"gpu"}, 2, `unknown command "gpu"`},
	} {
		cmd := NewCommand(&bytes.Buffer{})
		cmd.SetArgs(c.args)
		err := cmd.ExecuteContext(context.Background())
		if err == nil || !strings.Contains(err.Error(), c.want) || cmdline.ExitCode(err) != c.code {
			t.Errorf(
				"%v: %v (exit %d), want %q (exit %d)",
				c.args,
				err,
				cmdline.ExitCode(err),
				c.want,
				c.code,
			)
		}
	}
	t.Setenv("WHESTBAKE_CONFIG_FILE", "/nonexistent/env.yaml")
	cmd := NewCommand(&bytes.Buffer{})
	cmd.SetArgs([]string{"--role", "gpu"})
	if err := cmd.ExecuteContext(context.Background()); err == nil ||
		!strings.Contains(err.Error(), "/nonexistent/env.yaml") {
		t.Errorf("WHESTBAKE_CONFIG_FILE not read: %v", err)
	}
}

type fakeEngine struct{ calls int }

func (f *fakeEngine) BakeMLP(
	context.Context,
	bakeapi.Spec,
	gpuengine.Job,
	*gpuengine.Checkpoint,
	gpuengine.Progress,
) (gpuengine.Result, error) {
	f.calls++
	return gpuengine.Result{}, nil
}

func (f *fakeEngine) Describe() gpuengine.Description {
	return gpuengine.Description{Engine: "cuda", Device: gpuengine.DeviceCUDA}
}

func TestCUDAEngineRefusesNumpyForGood(t *testing.T) {
	f := &fakeEngine{}
	e := philoxOnly{f}
	_, err := e.BakeMLP(
		context.Background(),
		bakeapi.Spec{Sampler: bakeapi.SamplerNumpy},
		gpuengine.Job{},
		nil,
		nil,
	)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) ||
		!app.NonRetryable() ||
		app.Type() != bakeapi.ErrInvalidConfig ||
		f.calls != 0 {
		t.Fatalf("numpy slice on CUDA: %v (calls %d)", err, f.calls)
	}
	philox := bakeapi.Spec{Sampler: bakeapi.SamplerPhilox}
	if _, err := e.BakeMLP(context.Background(), philox, gpuengine.Job{}, nil, nil); err != nil ||
		f.calls != 1 {
		t.Fatalf("philox slice: %v (calls %d)", err, f.calls)
	}
}

func TestCPUDeviceRunsEverySampler(t *testing.T) {
	e, err := openEngine(gpuengine.DeviceCPU)
	if err != nil {
		t.Fatal(err)
	}
	if _, wrapped := e.(philoxOnly); wrapped || e.Describe().Device != gpuengine.DeviceCPU {
		t.Errorf("cpu engine = %#v", e)
	}
}

// Durations in the worker's log read as durations in both formats: slog's
// JSON handler alone would write 180000000000 for three minutes.
func TestLogDurationsAsText(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("stopping", "timeout", GPUStopTimeout, "policy", bakeapi.Duration(90*time.Second))
		for _, want := range []string{"3m0s", "1m30s"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s log %q lacks %s", format, buf.String(), want)
			}
		}
	}
}
