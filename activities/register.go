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
// merge, combine, push, Hub push) and the workflows' local activity
// (GPUWorkers) under their bakeapi names.
func RegisterControl(r Registry, a *Activities) {
	register(r, a.GenerateSeeds, bakeapi.GenerateSeedsActivity)
	register(r, a.MergeSplit, bakeapi.MergeSplitActivity)
	register(r, a.CombineSplits, bakeapi.CombineSplitsActivity)
	register(r, a.Push, bakeapi.PushActivity)
	register(r, a.HubPush, bakeapi.HubPushActivity)
	register(r, a.GPUWorkers, bakeapi.GPUWorkersActivity)
}

// RegisterGPU registers the activities of the GPU queues: BakeSlice, and
// NameSplit, which needs the salt that only GPU workers hold.
func RegisterGPU(r Registry, a *Activities) {
	register(r, a.BakeSlice, bakeapi.BakeSliceActivity)
	register(r, a.NameSplit, bakeapi.NameSplitActivity)
}

// register registers activity under its bakeapi name.
func register(r Registry, activityFunc any, name string) {
	r.RegisterActivityWithOptions(activityFunc, activity.RegisterOptions{Name: name})
}
