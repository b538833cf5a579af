//go:build !cuda

package cli

import (
	"context"
	"errors"

	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bench"
)

// gpuEngines is empty: this build has no CUDA engine.
func gpuEngines() ([]namedEngine, error) { return nil, nil }

// gpuPhases needs the CUDA engine.
func gpuPhases(context.Context, bench.Config) (gpuengine.Phases, error) {
	return gpuengine.Phases{}, errors.New("--phases: " +
		"this whestbake binary was built without CUDA support (make build-cuda)")
}
