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

// sliceOptions routes a slice to the GPU queue; no schedule-to-start timeout,
// because a slice legitimately waits for a free GPU. With waitCancel, a
// cancelled split waits until its running slices have stopped (saving their
// checkpoints), so that once it is closed nothing of it writes any more.
func sliceOptions(
	ctx workflow.Context,
	p bakeapi.Policy,
	queue, summary string,
	waitCancel bool,
) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: time.Duration(p.SliceTimeout),
		HeartbeatTimeout:    time.Duration(p.SliceHeartbeat),
		RetryPolicy:         retryPolicy(p, p.SliceMaxAttempts),
		Summary:             summary,
		WaitForCancellation: waitCancel,
	})
}

// controlOptions runs the CPU activities next to the workflows. With
// waitCancel (drainChange), a cancelled workflow waits until the activity
// has stopped, so that once it is closed nothing of it writes any more.
func controlOptions(
	ctx workflow.Context,
	waitCancel bool,
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
		WaitForCancellation: waitCancel,
	})
}

// followOptions runs a MergeSplitFollowing, which follows its split, on the
// control queue. It lasts as long as the split bakes, days perhaps, so its
// attempt is bounded by followTimeout and its liveness by the heartbeat;
// and as a control worker restarted by a deploy costs it an attempt, which
// starts over from the committed slices, its attempts are not counted:
// only a non-retryable failure (a damaged slice, bad config) ends it.
func followOptions(
	ctx workflow.Context,
	waitCancel bool,
	p bakeapi.Policy,
	summary string,
) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           bakeapi.ControlQueue,
		StartToCloseTimeout: followTimeout,
		HeartbeatTimeout:    time.Duration(p.FilesystemHeartbeat),
		RetryPolicy:         retryPolicy(p, 0),
		Summary:             summary,
		WaitForCancellation: waitCancel,
	})
}

// followTimeout bounds one attempt of a following merge: longer than any
// bake, so that only a lost heartbeat times one out.
const followTimeout = 90 * 24 * time.Hour
