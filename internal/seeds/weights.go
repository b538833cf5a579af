package seeds

import (
	"fmt"
	"math"
)

// Weights returns depth matrices width×width, layer-major then row-major
// (index l*w*w + i*w + j), bit-identical to whestbench's sample_mlp: float64
// standard normals from the weight stream in that order, each multiplied by
// sqrt(2/width) in float64 and rounded to float32.
func Weights(width, depth int, weight SeedSequence) ([]float32, error) {
	if width <= 0 {
		return nil, fmt.Errorf("seeds: width must be positive, got %d", width)
	}
	if depth <= 0 {
		return nil, fmt.Errorf("seeds: depth must be positive, got %d", depth)
	}
	n := width * width * depth
	if n/depth/width != width {
		return nil, fmt.Errorf("seeds: width*width*depth overflows int (width %d, depth %d)", width, depth)
	}
	scale := math.Sqrt(2.0 / float64(width))
	g := NewPCG64(weight)
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(g.StandardNormal() * scale)
	}
	return out, nil
}
