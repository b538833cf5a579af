package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/activities"
)

// Task queues. GPU workers poll GPUQueue (optionally suffixed by the engine's
// fingerprint); the control worker runs the workflows and the CPU activities.
const (
	ControlQueue = "bake-control"
	GPUQueue     = "bake-gpu"
)

// Policy holds every timeout and retry bound of a bake. It comes from config and
// is recorded in the workflow input, so the history says what the bake ran with.
type Policy struct {
	SeedsTimeout        time.Duration // GenerateSeeds start-to-close
	SliceTimeout        time.Duration // one BakeSlice attempt; ≥ 2× the slowest slice
	SliceHeartbeat      time.Duration // how fast a dead GPU host is noticed
	SliceMaxAttempts    int32
	MergeTimeout        time.Duration // MergeSplit and CombineSplits
	PushTimeout         time.Duration
	RetryInitial        time.Duration
	RetryMax            time.Duration
	OtherMaxAttempts    int32
	FilesystemHeartbeat time.Duration // heartbeat of the copy-heavy CPU activities
}

// DefaultPolicy: slices may run for hours, so the heartbeat (not start-to-close)
// detects a lost host within minutes; every retry is bounded, because Temporal's
// default retries forever and a poisoned input would loop.
var DefaultPolicy = Policy{
	SeedsTimeout:        10 * time.Minute,
	SliceTimeout:        12 * time.Hour,
	SliceHeartbeat:      3 * time.Minute,
	SliceMaxAttempts:    20,
	MergeTimeout:        2 * time.Hour,
	PushTimeout:         2 * time.Hour,
	RetryInitial:        10 * time.Second,
	RetryMax:            10 * time.Minute,
	OtherMaxAttempts:    10,
	FilesystemHeartbeat: 2 * time.Minute,
}

func (p Policy) retry(attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        p.RetryInitial,
		BackoffCoefficient:     2,
		MaximumInterval:        p.RetryMax,
		MaximumAttempts:        attempts,
		NonRetryableErrorTypes: activities.NonRetryable,
	}
}

// sliceOptions routes a slice to the GPU queue; no schedule-to-start timeout,
// because a slice legitimately waits for a free GPU.
func (p Policy) sliceOptions(ctx workflow.Context, queue, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: p.SliceTimeout,
		HeartbeatTimeout:    p.SliceHeartbeat,
		RetryPolicy:         p.retry(p.SliceMaxAttempts),
		Summary:             summary,
	})
}

// controlOptions runs the CPU activities next to the workflows.
func (p Policy) controlOptions(ctx workflow.Context, timeout time.Duration, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ControlQueue,
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    p.FilesystemHeartbeat,
		RetryPolicy:         p.retry(p.OtherMaxAttempts),
		Summary:             summary,
	})
}
