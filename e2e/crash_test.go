package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"

	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestGPUWorkerKilledMidMLP: SIGKILL the only GPU worker while it is inside
// an MLP with a checkpoint in the store, then start a new one. The bake
// completes, no finished MLP is baked again, the interrupted one continues
// from its checkpoint, and the output is bit-identical to a local bake.
func TestGPUWorkerKilledMidMLP(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	gpu := s.startWorker("gpu")
	// Seconds per MLP on one thread, checkpointed every 200 ms.
	// Slices: [0,1) and [1,3); the kill lands inside MLP 2, after MLP 1 of
	// the same slice finished.
	b := bakeSpec{
		ID:          "crash",
		Width:       64,
		Depth:       4,
		NSamples:    3_000_000,
		SliceSize:   2,
		MaxInFlight: 1,
		Tag:         "crash",
		Splits:      []splitSpec{{"public", "default", 3, 7}},
	}
	cfg := s.bakeConfig(b)
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)

	bk := keys.Bake(b.ID)
	ctx := context.Background()
	exists := func(key string) bool { return s.exists(t, key) }
	s.killInsideMLP2(t, gpu, b.ID, 90*time.Second)
	data, err := s.art.Get(ctx, bk.MLPCheckpoint("public", 2))
	if err != nil {
		t.Fatal(err)
	}
	var cp gpuengine.Checkpoint
	err = json.Unmarshal(data, &cp)
	if err != nil || cp.SamplesDone <= 0 || cp.SamplesDone >= b.NSamples {
		t.Fatalf("checkpoint of MLP 2: %d samples done (%v), want a point inside the MLP",
			cp.SamplesDone, err)
	}

	s.startWorker("gpu")
	// Reattaches to the running bake.
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")

	runs := s.sliceRuns(bakeapi.SplitWorkflowID(b.ID, "public"))
	if len(runs) != 2 {
		t.Fatalf("%d slices completed, want 2: %+v", len(runs), runs)
	}
	for _, r := range runs {
		switch r.In.Slice {
		case 0:
			if r.Attempt != 1 || r.Out.Computed != 1 {
				t.Errorf("slice 0 (done before the kill): attempt %d %+v, want one attempt",
					r.Attempt, r.Out)
			}
		case 1:
			if r.Attempt < 2 || r.Out.Reused != 1 || r.Out.Resumed != 1 || r.Out.Computed != 0 {
				t.Errorf("slice 1 after the kill: attempt %d %+v, want attempt ≥ 2 "+
					"with MLP 1 reused and MLP 2 resumed, nothing computed afresh",
					r.Attempt, r.Out)
			}
		}
	}
	if exists(bk.MLPCheckpoint("public", 2)) {
		t.Error("the resumed MLP's checkpoint was left behind")
	}
	datasettest.SameDataset(t, s.download(b), s.localBake(b))
}

// exists reports whether key is in the artifact bucket, failing t on an S3 error.
func (s *stack) exists(t *testing.T, key string) bool {
	t.Helper()
	ok, err := s.art.Exists(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// killInsideMLP2 waits until MLP 1 of bake id's public split has finished and
// MLP 2 has a checkpoint, then SIGKILLs gpu: the crash tests need the kill to
// land inside an MLP, so MLP 2 finishing first fails t.
func (s *stack) killInsideMLP2(t *testing.T, gpu *proc, id string, within time.Duration) {
	t.Helper()
	bk := keys.Bake(id)
	waitFor(t, within, "public MLP 1 finished and MLP 2 checkpointed", func() bool {
		return s.exists(t, bk.MLPResult("public", 1)) && s.exists(t, bk.MLPCheckpoint("public", 2))
	})
	gpu.kill()
	if s.exists(t, bk.MLPResult("public", 2)) {
		t.Fatal("MLP 2 finished before the kill landed: the test did not interrupt an MLP")
	}
}
