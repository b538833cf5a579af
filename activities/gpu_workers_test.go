package activities_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
)

// TestGPUWorkersCountsEveryPartition: the Temporal server spreads a queue's
// polls over its partitions (four by default) and lists, for each
// partition, only the pollers it saw there. GPUWorkers, run as the split
// runs it (a local activity of a workflow), counts the workers polling
// anywhere on the queue: twelve workers with identities of their own, each
// counted once, within seconds of their first polls.
func TestGPUWorkersCountsEveryPartition(t *testing.T) {
	c := devtest.Client(t, devtest.StartTemporal(t, devtest.Options(t)))

	const queue, workers = "gpu-count", 12
	for i := range workers {
		w := worker.New(
			c,
			queue,
			worker.Options{
				Identity:                           fmt.Sprintf("gpu-%d", i),
				DisableWorkflowWorker:              true,
				MaxConcurrentActivityExecutionSize: 1,
			},
		)
		w.RegisterActivityWithOptions(
			func(context.Context) error { return nil },
			activity.RegisterOptions{Name: "Noop"},
		)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	acts := &activities.Activities{}
	count := func(ctx workflow.Context) (int, error) {
		var out bakeapi.GPUWorkersOutput
		lctx := workflow.WithLocalActivityOptions(
			ctx,
			workflow.LocalActivityOptions{ScheduleToCloseTimeout: 10 * time.Second},
		)
		future := workflow.ExecuteLocalActivity(
			lctx,
			acts.GPUWorkers,
			bakeapi.GPUWorkersInput{Queue: queue},
		)
		err := future.Get(ctx, &out)
		return out.Workers, err
	}
	cw := worker.New(c, "control", worker.Options{})
	cw.RegisterWorkflowWithOptions(count, workflow.RegisterOptions{Name: "Count"})
	if err := cw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cw.Stop)

	parts, err := c.WorkflowService().ListTaskQueuePartitions(
		t.Context(),
		&workflowservice.ListTaskQueuePartitionsRequest{
			Namespace: devstack.Namespace,
			TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enums.TASK_QUEUE_KIND_NORMAL},
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts.GetActivityTaskQueuePartitions()) < 2 {
		t.Fatalf(
			"the dev server gives %s %d partitions: this test needs several",
			queue,
			len(parts.GetActivityTaskQueuePartitions()),
		)
	}

	deadline := time.Now().Add(20 * time.Second)
	for counted := 0; counted != workers; {
		run, err := c.ExecuteWorkflow(
			t.Context(),
			client.StartWorkflowOptions{TaskQueue: "control"},
			"Count",
		)
		if err == nil {
			err = run.Get(t.Context(), &counted)
		}
		if err != nil {
			t.Fatal(err)
		}
		if counted > workers {
			t.Fatalf("GPUWorkers counted %d workers, but only %d poll %s", counted, workers, queue)
		}
		if counted != workers && time.Now().After(deadline) {
			t.Fatalf(
				"GPUWorkers counts %d of the %d workers polling %s after 20 s",
				counted,
				workers,
				queue,
			)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
