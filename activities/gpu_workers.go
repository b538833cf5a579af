package activities

import (
	"context"

	enums "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
)

// GPUWorkers counts the distinct workers the Temporal server lists as
// polling a GPU queue for activities: the window of a split whose
// max-in-flight is auto. It runs as a local activity of the control worker,
// with that worker's client.
//
// The server spreads a queue's polls over its partitions (four by default)
// and describes one partition at a time, listing only the pollers it saw
// there; so GPUWorkers describes every partition and counts the union. The
// root partition alone listed 5 of 8 freshly started workers.
func (a *Activities) GPUWorkers(
	ctx context.Context,
	in bakeapi.GPUWorkersInput,
) (bakeapi.GPUWorkersOutput, error) {
	svc := activity.GetClient(ctx).WorkflowService()
	ns := activity.GetInfo(ctx).Namespace
	parts, err := svc.ListTaskQueuePartitions(ctx, &workflowservice.ListTaskQueuePartitionsRequest{
		Namespace: ns,
		TaskQueue: &taskqueuepb.TaskQueue{Name: in.Queue, Kind: enums.TASK_QUEUE_KIND_NORMAL},
	})
	if err != nil {
		return bakeapi.GPUWorkersOutput{}, err
	}
	ids := map[string]bool{}
	for _, p := range parts.GetActivityTaskQueuePartitions() {
		partition := &taskqueuepb.TaskQueue{Name: p.GetKey(), Kind: enums.TASK_QUEUE_KIND_NORMAL}
		resp, err := svc.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
			Namespace:     ns,
			TaskQueue:     partition,
			TaskQueueType: enums.TASK_QUEUE_TYPE_ACTIVITY,
		})
		if err != nil {
			return bakeapi.GPUWorkersOutput{}, err
		}
		for _, w := range resp.GetPollers() {
			ids[w.GetIdentity()] = true
		}
	}
	return bakeapi.GPUWorkersOutput{Workers: len(ids)}, nil
}
