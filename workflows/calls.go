package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// The activities and the child workflow the bake workflows call, each by its
// bakeapi name with its input and output types: a call cannot pass one
// activity's input to another, nor decode a result into the wrong type.
// Workflows call them by name, which keeps workflow code free of the
// activities' dependencies.
var (
	generateSeeds = activity[bakeapi.GenerateSeedsInput, bakeapi.GenerateSeedsOutput](
		bakeapi.GenerateSeedsActivity,
	)
	bakeSlice = activity[bakeapi.BakeSliceInput, bakeapi.BakeSliceOutput](
		bakeapi.BakeSliceActivity,
	)
	nameSplit = activity[bakeapi.NameSplitInput, bakeapi.NameSplitOutput](
		bakeapi.NameSplitActivity,
	)
	mergeSplit = activity[bakeapi.MergeSplitInput, bakeapi.MergeSplitOutput](
		bakeapi.MergeSplitActivity,
	)
	combineSplits = activity[bakeapi.CombineSplitsInput, bakeapi.CombineSplitsOutput](
		bakeapi.CombineSplitsActivity,
	)
	push    = activity[bakeapi.PushInput, bakeapi.PushOutput](bakeapi.PushActivity)
	hubPush = activity[bakeapi.HubPushInput, bakeapi.HubPushOutput](bakeapi.HubPushActivity)

	gpuWorkers = localActivity[bakeapi.GPUWorkersInput, bakeapi.GPUWorkersOutput](
		bakeapi.GPUWorkersActivity,
	)

	splitWorkflow = workflowType[bakeapi.SplitInput, bakeapi.SplitOutput](bakeapi.SplitWorkflowName)
)

// activity is an activity's name, typed with its input and output.
type activity[In, Out any] string

// start schedules the activity with the options of ctx.
func (a activity[In, Out]) start(ctx workflow.Context, in In) future[Out] {
	return future[Out]{workflow.ExecuteActivity(ctx, string(a), in)}
}

// run schedules the activity and waits for its result.
func (a activity[In, Out]) run(ctx workflow.Context, in In) (Out, error) {
	return a.start(ctx, in).get(ctx)
}

// localActivity is a local activity's name, typed with its input and output.
type localActivity[In, Out any] string

// run runs the local activity with the options of ctx and waits for its result.
func (a localActivity[In, Out]) run(ctx workflow.Context, in In) (Out, error) {
	return future[Out]{workflow.ExecuteLocalActivity(ctx, string(a), in)}.get(ctx)
}

// workflowType is a workflow's name, typed with its input and output.
type workflowType[In, Out any] string

// startChild starts the workflow as a child with the options of ctx.
func (w workflowType[In, Out]) startChild(ctx workflow.Context, in In) future[Out] {
	return future[Out]{workflow.ExecuteChildWorkflow(ctx, string(w), in)}
}

// continueAsNew is the error that ends this run and starts the workflow
// again from in.
func (w workflowType[In, Out]) continueAsNew(ctx workflow.Context, in In) error {
	return workflow.NewContinueAsNewError(ctx, string(w), in)
}

// future is a call's result to come, typed. A Selector takes the SDK's
// own future: AddFuture(f.Future, …).
type future[Out any] struct{ workflow.Future }

// get waits for the result.
func (f future[Out]) get(ctx workflow.Context) (Out, error) {
	var out Out
	err := f.Get(ctx, &out)
	return out, err
}
