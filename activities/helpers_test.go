package activities_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// withSalt is a worker's salt source (Activities.Salt) whose WHEST_SEED_SALT
// is text.
func withSalt(text string) func() (seeds.Salt, error) {
	return func() (seeds.Salt, error) {
		return mlps.EnvSalt(func(string) string { return text })
	}
}

// shape is small enough for milliseconds per MLP, with enough philox steps
// (4096 samples in chunks of 256) to interrupt an MLP halfway.
var shape = bakeapi.Spec{
	Width:     4,
	Depth:     2,
	NSamples:  4096,
	Sampler:   "philox",
	ChunkSize: 256,
}

// countingEngine is the CPU engine plus a record of what it was asked to do,
// to tell recomputed MLPs from reused ones.
type countingEngine struct {
	gpuengine.CPU
	mu      sync.Mutex
	calls   int
	resumes []int64       // SamplesDone of every checkpoint resumed from
	failAt  map[int]error // errors to return instead of baking, by call number (1-based)
}

func (c *countingEngine) BakeMLP(
	ctx context.Context,
	spec bakeapi.Spec,
	job gpuengine.Job,
	resume *gpuengine.Checkpoint,
	progress gpuengine.Progress,
) (gpuengine.Result, error) {
	c.mu.Lock()
	c.calls++
	n := c.calls
	if resume != nil {
		c.resumes = append(c.resumes, resume.SamplesDone)
	}
	err := c.failAt[n]
	c.mu.Unlock()
	if err != nil {
		return gpuengine.Result{}, err
	}
	return c.CPU.BakeMLP(ctx, spec, job, resume, progress)
}

func (c *countingEngine) count() (int, []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, append([]int64(nil), c.resumes...)
}

// fixture is the one real MinIO every activity test runs against.
type fixture struct {
	t      *testing.T
	st     *store.Store
	cfg    store.Config
	bucket string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	cfg, bucket := devtest.StartStore(t)
	st, err := store.Open(context.Background(), cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{
		t:      t,
		st:     st,
		cfg:    cfg,
		bucket: bucket,
	}
}

// acts are fresh Activities on the fixture's store with eng as the engine.
func (f *fixture) acts(eng gpuengine.Engine) *activities.Activities {
	return &activities.Activities{
		Store:   f.st,
		Engine:  eng,
		Threads: 1,
		TempDir: f.t.TempDir(),
	}
}

// run executes method (a method value of a, e.g. a.BakeSlice) in a test
// activity environment, which gives it a real activity context: info,
// heartbeats, worker stop channel.
// setup adjusts the environment first (e.g. a worker stop channel).
func run[Out any](
	a *activities.Activities,
	method, in any,
	setup ...func(*testsuite.TestActivityEnvironment),
) (Out, error) {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	for _, f := range setup {
		f(env)
	}
	var out Out
	v, err := env.ExecuteActivity(method, in)
	if err != nil {
		return out, err
	}
	return out, v.Get(&out)
}

// mustRun is run for calls that must succeed.
func mustRun[Out any](t *testing.T, a *activities.Activities, method, in any) Out {
	t.Helper()
	out, err := run[Out](a, method, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantAppError fails unless err is a non-retryable ApplicationError of type kind.
func wantAppError(t *testing.T, err error, kind string) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("error %v, want an ApplicationError of type %s", err, kind)
	}
	if app.Type() != kind || !app.NonRetryable() {
		t.Fatalf(
			"error type %q non-retryable=%v (%v), want non-retryable %q",
			app.Type(),
			app.NonRetryable(),
			err,
			kind,
		)
	}
	return app
}

// releaseInput is the Push of the dataset at datasetPrefix to the
// fixture's bucket, as datasets/name/tag.
func releaseInput(f *fixture, datasetPrefix, name, tag string) bakeapi.PushInput {
	return bakeapi.PushInput{
		DatasetPrefix: datasetPrefix,
		Bucket:        f.bucket,
		Prefix:        "datasets",
		Name:          name,
		Tag:           tag,
	}
}

// seedsInput asks GenerateSeeds for the n seeds of the test split of bake
// bakeID that derive from seed.
func seedsInput(bakeID string, n int, seed uint64) bakeapi.GenerateSeedsInput {
	return bakeapi.GenerateSeedsInput{
		BakeID: bakeID,
		Split:  split,
		NMLPs:  n,
		Seed:   &seed,
	}
}

// rawClient is a MinIO client of the fixture's server that bypasses the
// store, to write objects as another S3 tool would.
func rawClient(t *testing.T, f *fixture) *minio.Client {
	t.Helper()
	c, err := minio.New(f.cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(f.cfg.AccessKey, f.cfg.SecretKey, ""),
		Secure: f.cfg.Secure,
		Region: f.cfg.Region,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
