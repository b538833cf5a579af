package worker

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
)

// openEngine opens the slice engine of a GPU-role worker. The philox sampler
// decides the device: "auto" takes CUDA when this binary has it and a GPU
// is present. The CPU engine also runs the numpy sampler.
func openEngine(device string) (gpuengine.Engine, error) {
	e, err := gpuengine.Open(device, bakeapi.SamplerPhilox)
	if err != nil {
		return nil, bakeapi.Rename(err, func(string) string { return "worker.device" })
	}
	if e.Describe().Device == gpuengine.DeviceCPU {
		return e, nil
	}
	return philoxOnly{e}, nil
}

// philoxOnly refuses numpy slices on a CUDA engine for good: retrying on the
// same queue cannot help, and silently computing on the CPU would record the
// wrong device in the dataset's metadata.
type philoxOnly struct{ gpuengine.Engine }

func (p philoxOnly) BakeMLP(
	ctx context.Context,
	spec bakeapi.Spec,
	job gpuengine.Job,
	resume *gpuengine.Checkpoint,
	progress gpuengine.Progress,
) (gpuengine.Result, error) {
	if spec.Sampler != bakeapi.SamplerPhilox {
		return gpuengine.Result{}, temporal.NewNonRetryableApplicationError(
			"this GPU worker runs CUDA, which bakes the philox sampler only: "+
				"bake the numpy sampler on CPU workers (whestbake-worker --role gpu --device cpu) "+
				"serving their own bake.gpu-queue, or use bake.sampler: philox",
			bakeapi.ErrInvalidConfig,
			nil,
		)
	}
	return p.Engine.BakeMLP(ctx, spec, job, resume, progress)
}
