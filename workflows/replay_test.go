package workflows_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/whestbake/whestbake/workflows"
)

// -update re-records testdata/histories from a bake on a live dev server
// (see record_test.go). Run it after a deliberate, versioned workflow change:
//
//	go test ./workflows/ -run TestRecordHistories -update
var update = flag.Bool("update", false, "re-record testdata/histories from a bake on a real Temporal dev server")

const historyDir = "testdata/histories"

// Recorded histories: each replays against today's workflow code.
var goodHistories = []string{"bake.json", "split-public.json", "split-holdout.json"}

// incompatibleHistory is bake.json with its first GenerateSeeds scheduled as
// another activity type, as if recorded by an older BakeWorkflow.
const incompatibleHistory = "bake-incompatible.json"

func replayer(t *testing.T) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(workflows.BakeWorkflow)
	r.RegisterWorkflow(workflows.SplitWorkflow)
	return r
}

// TestReplayRecordedHistories is the guard against non-deterministic workflow
// changes: a history recorded by the current code must replay command for
// command. A failure here means a change needs workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	for _, name := range goodHistories {
		t.Run(name, func(t *testing.T) {
			err := replayer(t).ReplayWorkflowHistoryFromJSONFile(quietLogger(), filepath.Join(historyDir, name))
			if err != nil {
				t.Fatalf("%s no longer replays (if the change is deliberate and versioned, re-record with -update): %v", name, err)
			}
		})
	}
}

// TestReplayDetectsIncompatibleHistory proves the replay test can fail.
func TestReplayDetectsIncompatibleHistory(t *testing.T) {
	err := replayer(t).ReplayWorkflowHistoryFromJSONFile(quietLogger(), filepath.Join(historyDir, incompatibleHistory))
	if err == nil {
		t.Fatal("an incompatible history replayed cleanly: the replay test cannot catch non-determinism")
	}
	if !strings.Contains(err.Error(), "nondeterministic") && !strings.Contains(err.Error(), "TMPRL1100") {
		t.Fatalf("replay failed for another reason than non-determinism: %v", err)
	}
}

// TestHistoriesHoldNoBytes: only keys, counts and sha256s travel through
// Temporal. A history is a few kilobytes per slice, never a dataset.
func TestHistoriesHoldNoBytes(t *testing.T) {
	for _, name := range goodHistories {
		data, err := os.ReadFile(filepath.Join(historyDir, name))
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
