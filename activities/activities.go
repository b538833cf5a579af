// Package activities holds the bake's Temporal activities: methods on
// Activities, which carries their dependencies. Every output goes to a
// deterministic key, from package keys, create-only or with identical bytes, so a
// retried, duplicated or zombie attempt is harmless. MinIO, not Temporal, holds
// the bytes; inputs and outputs are keys, counts and sha256s.
package activities

import (
	"context"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/metrics"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// Activities carries what the activities need. The zero durations take
// rows.DefaultCheckpointEvery and rows.DefaultStallTimeout.
type Activities struct {
	Store   *store.Store // the artifact bucket
	Engine  gpuengine.Engine
	Threads int // CPU threads per MLP for CPU engines

	// CheckpointEvery is how often an unfinished MLP's checkpoint is saved.
	CheckpointEvery time.Duration
	// StallTimeout fails a slice whose engine reports no progress for this long.
	StallTimeout time.Duration
	// TempDir holds local scratch copies of datasets; empty is os.TempDir.
	TempDir string
	// MaxMemory is what this worker may use, 0 for no limit: a slice whose
	// shape needs more fails at once and for good, instead of every worker
	// that takes it dying of an out-of-memory crash.
	MaxMemory int64
	// Metrics records slices, MLPs and engine throughput; nil records none.
	Metrics *metrics.Worker
	// HubToken reads the Hugging Face Hub token for HubPush; nil: this
	// worker has none. It is read at each push, so a rotated token file
	// takes effect without a restart.
	HubToken func() (string, error)
	// Salt reads this worker's protocol-4.0 salt, mlps.EnvSalt, or is nil
	// when this worker has none. BakeSlice checks it against the bake's
	// declared SHA-256. It never travels through Temporal or S3.
	Salt func() (seeds.Salt, error)
}

func (a *Activities) checkpointEvery() time.Duration {
	if a.CheckpointEvery > 0 {
		return a.CheckpointEvery
	}
	return rows.DefaultCheckpointEvery
}

func (a *Activities) stallTimeout() time.Duration {
	if a.StallTimeout > 0 {
		return a.StallTimeout
	}
	return rows.DefaultStallTimeout
}

func (a *Activities) scratch(pattern string) (string, error) {
	return os.MkdirTemp(a.TempDir, pattern)
}

// activityHeartbeat records progress when running inside an activity.
func activityHeartbeat(ctx context.Context, details any) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, details)
	}
}

// keepAlive heartbeats every quarter of the activity's heartbeat timeout
// until the returned stop is called. It covers local work with no progress to
// report, such as fetching and merging thousands of slices or naming a
// million MLPs, which can outlast the timeout: only a dead worker misses a heartbeat.
func keepAlive(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).HeartbeatTimeout <= 0 {
		return func() {}
	}
	tick := time.NewTicker(activity.GetInfo(ctx).HeartbeatTimeout / 4)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx, "working")
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		tick.Stop()
	}
}

// recordedOrNow is the time a bake's datasets record: its recorded start, or
// now for an input that has none, such as a local test's.
func recordedOrNow(recorded time.Time) time.Time {
	if recorded.IsZero() {
		return time.Now()
	}
	return recorded
}
