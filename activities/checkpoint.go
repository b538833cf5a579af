package activities

import (
	"context"
	"fmt"
	"time"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/metrics"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// checkpointer keeps the engine checkpoints of a slice attempt's MLPs in
// S3. The engine offers it each checkpoint as it makes one; it saves the
// latest every checkpointEvery, and once more when the engine stops, so a
// stop loses nothing and a crash at most checkpointEvery of work, while an
// MLP that finishes sooner costs no checkpoint at all. A run of failed saves
// ends the attempt (record).
type checkpointer struct {
	store     *store.Store
	heartbeat *heartbeat
	log       tlog.Logger
	slice     bakeapi.BakeSliceInput // whose seal every checkpoint carries
	every     time.Duration
	// samples is an MLP's count: a checkpoint of them all is never saved,
	// since the MLP's result follows at once.
	samples int64
	// stop ends the attempt's engine run with its cause.
	stop context.CancelCauseFunc

	// The MLP being computed, from begin.
	mlp      int
	key      string
	progress *metrics.MLPProgress
	pending  []byte    // its latest checkpoint, sealed, not saved yet; nil when none
	lastSave time.Time // its last save, or when its computation began
	tried    bool      // a save of it was tried: a checkpoint of it may be stored

	// The saves that failed in a row, over the attempt's MLPs.
	failedSaves  int
	failingSince time.Time // when the first of them failed
}

// newCheckpointer is the attempt's checkpointer, once its plan is set;
// stop ends the attempt's engine run.
func (r *sliceRun) newCheckpointer(stop context.CancelCauseFunc) *checkpointer {
	return &checkpointer{
		store:     r.acts.Store,
		heartbeat: r.heartbeat,
		log:       r.log,
		slice:     r.in,
		every:     r.acts.checkpointEvery(),
		samples:   r.plan.Spec.NSamples,
		stop:      stop,
	}
}

// checkpointSaveTimeout bounds one checkpoint save: the engine waits for it.
var checkpointSaveTimeout = 30 * time.Second

// A worker that cannot save its checkpoints keeps computing work it would
// lose, and holds the slice all the while (its heartbeats go on). So a run
// of failed saves ends the attempt: after maxFailedSaves of them, or when
// one fails maxFailingSaves after the first (with a long
// worker.checkpoint-every). At the defaults, saves every 10 s that wait up
// to 30 s each, that is within 2 minutes; a single failed save, a blip,
// costs nothing.
const (
	maxFailedSaves  = 3
	maxFailingSaves = 2 * time.Minute
)

// begin starts keeping the checkpoints of MLP mlp, at key, whose engine
// run progress reports.
func (c *checkpointer) begin(mlp int, key string, progress *metrics.MLPProgress) {
	c.mlp = mlp
	c.key = key
	c.progress = progress
	c.pending = nil
	c.lastSave = time.Now()
	c.tried = false
}

// offer takes the engine's latest checkpoint of the MLP and saves it when a
// save is due. It stops the attempt's engine run once S3 has refused too
// many saves.
func (c *checkpointer) offer(ctx context.Context, cp gpuengine.Checkpoint) {
	if cp.SamplesDone == c.samples {
		c.pending = nil // the result object follows at once
		return
	}
	stored := storedCheckpoint{Fingerprint: c.slice.Fingerprint, Checkpoint: cp}
	c.pending, _ = seal.Marshal(&stored, &stored.Seal, sliceSeal(c.slice, c.key))
	if time.Since(c.lastSave) < c.every {
		return
	}
	err := c.save(ctx)
	if err != nil {
		c.log.Warn("checkpoint save failed", "MLP", c.mlp, "Error", err)
	}
	if cause := c.record(err, uri(c.store, c.key)); cause != nil {
		c.pending = nil // no save on the way out: S3 has refused enough
		c.stop(cause)
	}
}

// flush saves the checkpoint not saved yet, if any, of an MLP whose engine
// run stopped before its end.
func (c *checkpointer) flush(ctx context.Context) {
	if err := c.save(ctx); err != nil {
		c.log.Warn("checkpoint save on stop failed", "MLP", c.mlp, "Error", err)
	}
}

// save puts the pending checkpoint, if any. It runs on when ctx ends (the
// save of a stopping engine's last checkpoint), for checkpointSaveTimeout
// at most.
func (c *checkpointer) save(ctx context.Context) error {
	if c.pending == nil {
		return nil
	}
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointSaveTimeout)
	defer cancel()
	defer c.heartbeat.waitingOnS3(c.store, "put", c.key)()
	err := c.store.Put(saveCtx, c.key, c.pending)
	c.pending = nil
	c.lastSave = time.Now()
	c.tried = true
	if err == nil {
		c.progress.Checkpointed()
		c.heartbeat.saved()
	}
	return err
}

// record notes how a save to the s3:// address at went (err); it returns
// the error that ends the attempt once the saves have failed too often or
// too long.
func (c *checkpointer) record(err error, at string) error {
	if err == nil {
		c.failedSaves = 0
		c.failingSince = time.Time{}
		return nil
	}
	if c.failedSaves == 0 {
		c.failingSince = time.Now()
	}
	c.failedSaves++
	if c.failedSaves < maxFailedSaves && time.Since(c.failingSince) < maxFailingSaves {
		return nil
	}
	msg := fmt.Sprintf("S3 failed %d checkpoint saves in a row over %s, the last one to %s: %v; "+
		"this worker cannot save its progress, so the attempt ends and the slice is retried "+
		"(check s3.endpoint and the network to it)",
		c.failedSaves, time.Since(c.failingSince).Round(time.Second), at, err)
	return temporal.NewApplicationError(msg, bakeapi.ErrStoreUnavailable)
}
