//go:build !cuda

package cli

// gpuEngines is empty: this build has no CUDA engine.
func gpuEngines() ([]namedEngine, error) { return nil, nil }
