package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// retryPolicy bounds every retry: Temporal's default retries forever, and a
// poisoned input would loop.
func retryPolicy(p bakeapi.Policy, attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Duration(p.RetryInitial),
		BackoffCoefficient:     2,
		MaximumInterval:        time.Duration(p.RetryMax),
		MaximumAttempts:        attempts,
		NonRetryableErrorTypes: bakeapi.NonRetryable,
	}
}

// sliceOptions routes a slice to the GPU queue. It has no schedule-to-start
// timeout, because a slice legitimately waits for a free GPU. A cancelled
// split waits until its running slices have stopped and saved their
// checkpoints, so that once it is closed nothing of it writes any more.
func sliceOptions(ctx workflow.Context, p bakeapi.Policy, queue, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: time.Duration(p.SliceTimeout),
		HeartbeatTimeout:    time.Duration(p.SliceHeartbeat),
		RetryPolicy:         retryPolicy(p, p.SliceMaxAttempts),
		Summary:             summary,
		WaitForCancellation: true,
	})
}

// controlOptions runs the CPU activities next to the workflows. A cancelled
// workflow waits until the activity has stopped, so that once it is closed
// nothing of it writes any more: a restart of the bake uses the same keys.
func controlOptions(
	ctx workflow.Context,
	p bakeapi.Policy,
	timeout bakeapi.Duration,
	summary string,
) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           bakeapi.ControlQueue,
		StartToCloseTimeout: time.Duration(timeout),
		HeartbeatTimeout:    time.Duration(p.FilesystemHeartbeat),
		RetryPolicy:         retryPolicy(p, p.OtherMaxAttempts),
		Summary:             summary,
		WaitForCancellation: true,
	})
}

// mergeOptions runs a MergeSplit, which follows its split, on the control
// queue. It lasts as long as the split bakes, days perhaps, so its attempt
// is bounded by followTimeout and its liveness by the heartbeat. A control
// worker restarted by a deploy costs it an attempt, which starts over from
// the committed slices, so its attempts are not counted: only a
// non-retryable failure such as a damaged slice or a bad config ends it.
func mergeOptions(ctx workflow.Context, p bakeapi.Policy, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           bakeapi.ControlQueue,
		StartToCloseTimeout: followTimeout,
		HeartbeatTimeout:    time.Duration(p.FilesystemHeartbeat),
		RetryPolicy:         retryPolicy(p, 0),
		Summary:             summary,
		WaitForCancellation: true,
	})
}

// followTimeout bounds one attempt of a merge beside its split: longer than any
// bake, so that only a lost heartbeat times one out.
const followTimeout = 90 * 24 * time.Hour
