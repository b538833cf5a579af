package activities_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
)

// steadyEngine is the CPU engine slowed to a step every 20 ms, so that an
// MLP reports progress (and saves checkpoints) many times.
type steadyEngine struct{ gpuengine.CPU }

func (e steadyEngine) BakeMLP(
	ctx context.Context,
	spec bakeapi.Spec,
	job gpuengine.Job,
	resume *gpuengine.Checkpoint,
	progress gpuengine.Progress,
) (gpuengine.Result, error) {
	return e.CPU.BakeMLP(ctx, spec, job, resume, func(cp gpuengine.Checkpoint) {
		progress(cp)
		time.Sleep(20 * time.Millisecond)
	})
}

// cutOff runs a slice of MLPs [0, 2) of bake id on a worker whose S3
// requests pass a fault proxy that holds, unanswered, the writes whose
// path contains hold (the first n of them; n < 0: all), as an S3 cut off
// from the worker does. Checkpoints are due at every step and given up after
// 100 ms; stalls are noticed after a second.
func cutOff(t *testing.T, f *fixture, id, hold string, n int64) (bakeapi.BakeSliceOutput, error) {
	t.Helper()
	activities.SetCheckpointSaveTimeout(t, 100*time.Millisecond)
	a := f.acts(steadyEngine{})
	sd := seedSplit(t, a, id, 2, 31)
	proxy := devtest.StartFaultProxy(t, f.cfg.Endpoint)
	var held atomic.Int64
	proxy.SetFault(func(r *http.Request) devtest.Fault {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, hold) &&
			(n < 0 || held.Add(1) <= n) {
			return devtest.Fault{Hang: true}
		}
		return devtest.Fault{}
	})
	a.Store = f.storeVia(t, proxy.Addr)
	a.CheckpointEvery = time.Millisecond
	a.StallTimeout = time.Second
	return run[bakeapi.BakeSliceOutput](a, a.BakeSlice, sliceInput(id, sd, 0, 0, 2))
}

// testBakeSliceCutOffFromS3FailsItsAttempt: a worker whose checkpoint saves
// get no answer from S3 ends the attempt after three of them, with an
// error that names S3 and the checkpoint's key, instead of computing on
// (work it could not keep) and holding the slice until the stall check.
func testBakeSliceCutOffFromS3FailsItsAttempt(t *testing.T, f *fixture) {
	start := time.Now()
	_, err := cutOff(t, f, "cut-off", "/checkpoints/", -1)
	key := "s3://" + f.bucket + "/" + keys.Bake("cut-off").MLPCheckpoint(split, 0)
	activities.WantStoreUnavailable(
		t,
		err,
		"S3 failed 3 checkpoint saves in a row",
		"the last one to "+key,
		"context deadline exceeded",
	)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the attempt ended after %s, want about three saves' timeouts", took)
	}
}

// testBakeSliceRidesOutAFailedCheckpointSave: one save that S3 does not
// answer is a blip: the next saves go through and the slice commits the
// same bits.
func testBakeSliceRidesOutAFailedCheckpointSave(t *testing.T, f *fixture) {
	out, err := cutOff(t, f, "blip", "/checkpoints/", 1)
	if err != nil {
		t.Fatalf("one failed checkpoint save failed the attempt: %v", err)
	}
	if got, want := parquetSHA(t, f.st, out.Prefix), localParquetSHA(t, 2, 31, 0, 2); got != want {
		t.Errorf("parquet sha256 %s, local bake %s", got, want)
	}
}

// testBakeSliceStalledOnS3NamesS3: an attempt held past the stall timeout
// by an S3 request (here the finished MLP's result, whose write S3 never
// answers) fails naming S3 and the key, not the engine.
func testBakeSliceStalledOnS3NamesS3(t *testing.T, f *fixture) {
	_, err := cutOff(t, f, "stalled-s3", "/mlps/", -1)
	key := "s3://" + f.bucket + "/" + keys.Bake("stalled-s3").MLPResult(split, 0)
	activities.WantStoreUnavailable(
		t,
		err,
		"no progress for 1s on MLP 0: an S3 request (create "+key+") has not returned",
	)
	if strings.Contains(err.Error(), "engine made no progress") {
		t.Errorf("error %q blames the engine", err)
	}
}
