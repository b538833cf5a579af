//go:build cuda

package cli

import "github.com/whestbake/whestbake/gpuengine"

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
