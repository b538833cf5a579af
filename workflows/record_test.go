package workflows_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/version"
	"github.com/whestbake/whestbake/workflows"
)

// TestRecordHistories (only with -update) runs two-split bakes on a real
// Temporal dev server and MinIO, with control and GPU workers in this process,
// and writes the histories of this version (internal/version.Version) into the
// corpus the replay tests read: a plain bake and its splits, a failed bake
// and a cancelled one. A split that continues as new is not recorded: its
// runs are as long as runEventBudget allows, a history too large for the
// corpus, and a smaller budget would not replay against the real one. An
// existing version's directory is rewritten: record a version once, when it
// is released.
func TestRecordHistories(t *testing.T) {
	if !*update {
		t.Skip("re-records testdata/histories; run with -update")
	}
	o := devtest.Options(t)
	o.Buckets = []string{"whestbake"}
	o = devtest.StartMinIO(t, o)
	o = devtest.StartTemporal(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, o.S3Config(), "whestbake")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(
		client.Options{
			HostPort:  o.TemporalAddr(),
			Namespace: devstack.Namespace,
			Logger:    quietLogger(),
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := &activities.Activities{
		Store:   st,
		Engine:  gpuengine.CPU{},
		Threads: 1,
		TempDir: t.TempDir(),
	}
	control := worker.New(c, bakeapi.ControlQueue, worker.Options{})
	control.RegisterWorkflow(workflows.BakeWorkflow)
	control.RegisterWorkflow(workflows.SplitWorkflow)
	control.RegisterActivity(a)
	gpu := worker.New(
		c,
		bakeapi.GPUQueue,
		worker.Options{DisableWorkflowWorker: true, MaxConcurrentActivityExecutionSize: 1},
	)
	gpu.RegisterActivity(a)
	for _, w := range []worker.Worker{control, gpu} {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}

	in := twoSplitInput("replay")
	in.Release = bakeapi.ReleaseSpec{
		Bucket: "whestbake",
		Prefix: "releases",
		Name:   "replay",
		Tag:    "v1",
	}
	run := startBake(ctx, t, c, in)
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}

	dir := "v" + version.Version
	bk := history(ctx, t, c, bakeapi.BakeWorkflowID(in.BakeID))
	writeHistory(t, filepath.Join(dir, "bake.json"), bk)
	for _, s := range in.Splits {
		writeHistory(
			t,
			filepath.Join(dir, "split-"+s.Name+".json"),
			history(ctx, t, c, bakeapi.SplitWorkflowID(in.BakeID, s.Name)),
		)
	}
	// A bake that fails: the holdout split's uploaded seeds file is missing,
	// so GenerateSeeds fails for good and BakeWorkflow takes its failure path.
	bad := twoSplitInput("replay-failed")
	bad.Splits[1].Seed = nil
	bad.Splits[1].SeedsKey = "bakes/replay-failed/inputs/holdout-seeds.json"
	frun := startBake(ctx, t, c, bad)
	if err := frun.Get(ctx, nil); err == nil {
		t.Fatal("the bake with a missing seeds file succeeded")
	}
	writeHistory(
		t,
		filepath.Join(dir, "bake-failed.json"),
		history(ctx, t, c, bakeapi.BakeWorkflowID(bad.BakeID)),
	)

	// A bake cancelled while its slices wait on a GPU queue no worker
	// polls: the bake closes once its splits and merges have stopped.
	stop := twoSplitInput("replay-cancelled")
	stop.GPUQueue = "bake-gpu-idle"
	stop.Policy.FilesystemHeartbeat = bakeapi.Duration(2 * time.Second)
	srun := startBake(ctx, t, c, stop)
	waitBaking(ctx, t, c, srun.GetID())
	if err := c.CancelWorkflow(ctx, srun.GetID(), ""); err != nil {
		t.Fatal(err)
	}
	if err := srun.Get(ctx, nil); !temporal.IsCanceledError(err) {
		t.Fatalf("the cancelled bake ended with %v, want a cancellation", err)
	}
	writeHistory(
		t,
		filepath.Join(dir, "bake-cancelled.json"),
		history(ctx, t, c, srun.GetID()),
	)

	// An older BakeWorkflow that began with another activity: replaying it
	// against today's code must fail.
	for _, e := range bk.Events {
		if attr := e.GetActivityTaskScheduledEventAttributes(); attr != nil &&
			attr.GetActivityType().GetName() == "GenerateSeeds" {
			attr.ActivityType.Name = "GenerateSeedsV0"
			break
		}
	}
	writeHistory(t, incompatibleHistory, bk)
}

// startBake starts in's BakeWorkflow as the starter does, with the search
// attributes the Web UI filters on.
func startBake(
	ctx context.Context, t *testing.T, c client.Client, in bakeapi.BakeInput,
) client.WorkflowRun {
	t.Helper()
	idKey := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeIDAttribute)
	stageKey := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeStageAttribute)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        bakeapi.BakeWorkflowID(in.BakeID),
		TaskQueue: bakeapi.ControlQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			idKey.ValueSet(in.BakeID),
			stageKey.ValueSet(bakeapi.StageSeeding),
		),
	}, workflows.BakeWorkflow, in)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// waitBaking waits until the bake of workflow id has started its splits.
func waitBaking(ctx context.Context, t *testing.T, c client.Client, id string) {
	t.Helper()
	for {
		var p bakeapi.BakeProgress
		v, err := c.QueryWorkflow(ctx, id, "", bakeapi.ProgressQuery)
		if err == nil {
			err = v.Get(&p)
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Stage == bakeapi.StageBaking && len(p.Splits) > 0 &&
			p.Splits[0].Stage == bakeapi.StageBaking {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("bake %s never started its splits: %v", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// history is the latest run's history of workflow id.
func history(ctx context.Context, t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	var h historypb.History
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		h.Events = append(h.Events, e)
	}
	return &h
}

// writeHistory writes h in the JSON form `temporal workflow show --output
// json` prints, which ReplayWorkflowHistoryFromJSONFile reads.
func writeHistory(t *testing.T, name string, h *historypb.History) {
	t.Helper()
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(historyDir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(historyDir, name), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
