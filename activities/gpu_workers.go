package activities

import (
	"context"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
)

// GPUWorkers counts the distinct workers the Temporal server lists as
// polling a GPU queue for activities: the window of a split whose
// max-in-flight is auto. It runs as a local activity of the control worker,
// with that worker's client.
func (a *Activities) GPUWorkers(ctx context.Context, in bakeapi.GPUWorkersInput) (bakeapi.GPUWorkersOutput, error) {
	resp, err := activity.GetClient(ctx).DescribeTaskQueue(ctx, in.Queue, enums.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return bakeapi.GPUWorkersOutput{}, err
	}
	ids := map[string]bool{}
	for _, p := range resp.GetPollers() {
		ids[p.GetIdentity()] = true
	}
	return bakeapi.GPUWorkersOutput{Workers: len(ids)}, nil
}
