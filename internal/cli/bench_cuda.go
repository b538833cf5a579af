//go:build cuda

package cli

import (
	"context"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bench"
)

// gpuEngines opens the CUDA engine's fused and cuBLAS paths for `whestbake bench`.
func gpuEngines() ([]namedEngine, error) {
	var out []namedEngine
	for _, p := range []string{gpuengine.CUDAPathFused, gpuengine.CUDAPathCuBLAS} {
		e, err := gpuengine.OpenCUDA(p)
		if err != nil {
			return nil, err
		}
		out = append(out, namedEngine{name: "whestbake cuda " + p, eng: e})
	}
	return out, nil
}

// gpuPhases times the cuBLAS path's operations on the bench's MLP of c.
func gpuPhases(ctx context.Context, c bench.Config) (gpuengine.Phases, error) {
	spec := bakeapi.Spec{
		Width:    c.Width,
		Depth:    c.Depth,
		NSamples: c.NSamples,
		Sampler:  bakeapi.SamplerPhilox,
	}
	job, err := gpuengine.JobForSeed(spec, 42)
	if err != nil {
		return gpuengine.Phases{}, err
	}
	return gpuengine.CuBLASPhases(ctx, spec, job)
}
