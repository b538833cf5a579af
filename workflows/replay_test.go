package workflows_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// -update records testdata/histories/v<version> from a bake on a live dev
// server (see record_test.go), version being internal/version.Version. Run it
// when releasing a version (docs/ARCHITECTURE.md, "Safe upgrades"):
//
//	go test ./workflows/ -run TestRecordHistories -update
var update = flag.Bool(
	"update",
	false,
	"record testdata/histories/v<version> from a bake on a real Temporal dev server",
)

// historyDir holds one directory per released version, v<major>.<minor>.<patch>,
// with the histories that version's workflows wrote. Every one of them must
// replay against today's code: bakes run for days, and a worker upgraded in
// the middle of one replays the history its predecessor wrote.
const historyDir = "testdata/histories"

// incompatibleHistory is a recorded bake with its first GenerateSeeds
// scheduled as another activity type, as if written by a workflow that
// changed without a version patch.
const incompatibleHistory = "bake-incompatible.json"

func replayer(t *testing.T) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	workflows.Register(r)
	return r
}

// corpus lists the recorded histories by version directory.
func corpus(t *testing.T) map[string][]string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(historyDir, "v*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded versions under %s (%v)", historyDir, err)
	}
	out := map[string][]string{}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.json"))
		if len(files) == 0 {
			t.Fatalf("%s holds no histories", d)
		}
		out[filepath.Base(d)] = files
	}
	return out
}

// TestReplayRecordedHistories is the guard against non-deterministic workflow
// changes: every history any released version recorded must replay command
// for command. A failure here means a change needs workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	for version, files := range corpus(t) {
		for _, f := range files {
			t.Run(version+"/"+filepath.Base(f), func(t *testing.T) {
				if err := replayer(t).ReplayWorkflowHistoryFromJSONFile(
					quietLogger(),
					f,
				); err != nil {
					t.Fatalf(
						"%s (recorded by %s) no longer replays: "+
							"guard the change with workflow.GetVersion (docs/ARCHITECTURE.md, "+
							"\"Safe upgrades\"): %v",
						f,
						version,
						err,
					)
				}
			})
		}
	}
}

// TestReplayDetectsIncompatibleHistory proves the replay test can fail.
func TestReplayDetectsIncompatibleHistory(t *testing.T) {
	incompatible := filepath.Join(historyDir, incompatibleHistory)
	err := replayer(t).ReplayWorkflowHistoryFromJSONFile(quietLogger(), incompatible)
	if err == nil {
		t.Fatal(
			"an incompatible history replayed cleanly: " +
				"the replay test cannot catch non-determinism",
		)
	}
	if !strings.Contains(err.Error(), "nondeterministic") &&
		!strings.Contains(err.Error(), "TMPRL1100") {
		t.Fatalf("replay failed for another reason than non-determinism: %v", err)
	}
}

// TestHistoriesHoldNoBytes: only keys, counts and sha256s travel through
// Temporal. A history is a few kilobytes per slice, never a dataset.
func TestHistoriesHoldNoBytes(t *testing.T) {
	var all []string
	for _, files := range corpus(t) {
		all = append(all, files...)
	}
	for _, name := range all {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 256<<10 {
			t.Errorf("%s is %d bytes: something large travels through Temporal", name, len(data))
		}
		for _, secret := range []string{"secret", "password"} {
			if bytes.Contains(bytes.ToLower(data), []byte(secret)) {
				t.Errorf("%s contains %q", name, secret)
			}
		}
	}
}

// TestVersionPatchKeepsOldHistoriesReplaying shows the upgrade policy on a
// real recorded history: the same change to BakeWorkflow (a new first step)
// breaks the replay of every running bake unless it is behind
// workflow.GetVersion, which takes the old path for histories without the
// change's marker.
func TestVersionPatchKeepsOldHistoriesReplaying(t *testing.T) {
	var old string
	for _, files := range corpus(t) {
		for _, f := range files {
			if filepath.Base(f) == "bake.json" {
				old = f
			}
		}
	}
	newStep := func(ctx workflow.Context) {
		_ = workflow.Sleep(ctx, time.Millisecond)
	}
	unpatched := func(ctx workflow.Context, in bakeapi.BakeInput) (bakeapi.BakeOutput, error) {
		newStep(ctx)
		return workflows.BakeWorkflow(ctx, in)
	}
	patched := func(ctx workflow.Context, in bakeapi.BakeInput) (bakeapi.BakeOutput, error) {
		if workflow.GetVersion(ctx, "example-new-first-step", workflow.DefaultVersion, 1) == 1 {
			newStep(ctx)
		}
		return workflows.BakeWorkflow(ctx, in)
	}
	replay := func(wf any) error {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: bakeapi.BakeWorkflowName})
		return r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), old)
	}
	if err := replay(unpatched); err == nil {
		t.Error("an unversioned change replayed an old history: the corpus would not catch it")
	}
	if err := replay(patched); err != nil {
		t.Errorf("the versioned change does not replay %s: %v", old, err)
	}
}
