package gpuengine

import (
	"fmt"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/seeds"
)

// JobForSeed derives the MLP that whestbench builds from an input seed under
// seed protocol 3.0: its weights, bit-identical to numpy's, and its sample
// stream. Only spec's width and depth are used. A library user cannot reach
// the seed protocol any other way, as it lives in an internal package.
func JobForSeed(spec bakeapi.Spec, seed int64) (Job, error) {
	if seed < 0 {
		return Job{}, fmt.Errorf("input seed %d is negative: seeds are in [0, 2**63)", seed)
	}
	if spec.Width > bakeapi.MaxWidth || spec.Depth > bakeapi.MaxDepth {
		return Job{}, fmt.Errorf(
			"width %d, depth %d: above the limits %d, %d",
			spec.Width,
			spec.Depth,
			bakeapi.MaxWidth,
			bakeapi.MaxDepth,
		)
	}
	st := seeds.DeriveV3(uint64(seed))
	w, err := seeds.Weights(spec.Width, spec.Depth, st.Weight)
	if err != nil {
		return Job{}, err
	}
	return Job{Weights: w, Sample: st.Sample}, nil
}
