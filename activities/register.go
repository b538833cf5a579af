package activities

import (
	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
)

// Registry is where activities are registered: a worker or a test environment.
type Registry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// RegisterControl registers the CPU activities of the control queue (seeds,
// merge, combine, push, Hub push) and the workflows' local activity (GPUWorkers) under
// their bakeapi names.
func RegisterControl(r Registry, a *Activities) {
	r.RegisterActivityWithOptions(a.GenerateSeeds, activity.RegisterOptions{Name: bakeapi.GenerateSeedsActivity})
	r.RegisterActivityWithOptions(a.MergeSplit, activity.RegisterOptions{Name: bakeapi.MergeSplitActivity})
	r.RegisterActivityWithOptions(a.CombineSplits, activity.RegisterOptions{Name: bakeapi.CombineSplitsActivity})
	r.RegisterActivityWithOptions(a.Push, activity.RegisterOptions{Name: bakeapi.PushActivity})
	r.RegisterActivityWithOptions(a.HubPush, activity.RegisterOptions{Name: bakeapi.HubPushActivity})
	r.RegisterActivityWithOptions(a.GPUWorkers, activity.RegisterOptions{Name: bakeapi.GPUWorkersActivity})
}

// RegisterGPU registers the activities of the GPU queues: BakeSlice, and
// NameSplit, which needs the salt that only GPU workers hold.
func RegisterGPU(r Registry, a *Activities) {
	r.RegisterActivityWithOptions(a.BakeSlice, activity.RegisterOptions{Name: bakeapi.BakeSliceActivity})
	r.RegisterActivityWithOptions(a.NameSplit, activity.RegisterOptions{Name: bakeapi.NameSplitActivity})
}
