package seeds

import (
	"fmt"
	"math"
)

// Weights returns depth matrices width×width, layer-major then row-major,
// at index l*w*w + i*w + j, bit-identical to whestbench's sample_mlp: float64
// standard normals from the weight stream in that order, each multiplied by
// sqrt(2/width) in float64 and rounded to float32.
func Weights(width, depth int, weight SeedSequence) ([]float32, error) {
	return WeightsInto(nil, width, depth, weight)
}

// WeightsInto is Weights written into buf when it holds enough, so that a
// stream of MLPs reuses one array: 64 MiB at width 1024 × depth 16.
func WeightsInto(buf []float32, width, depth int, weight SeedSequence) ([]float32, error) {
	ws, err := NewWeightStream(width, depth, weight)
	if err != nil {
		return nil, err
	}
	out := buf[:0]
	if cap(buf) < ws.left {
		out = make([]float32, 0, ws.left)
	}
	out = out[:ws.left]
	ws.Next(out)
	return out, nil
}

// WeightStream yields the values of Weights in order, a stretch at a time,
// for a caller that compares or fills them without holding them all.
type WeightStream struct {
	rng   *PCG64
	scale float64
	left  int
}

// NewWeightStream starts the weights of an MLP of width and depth.
func NewWeightStream(width, depth int, weight SeedSequence) (*WeightStream, error) {
	if width <= 0 {
		return nil, fmt.Errorf("seeds: width must be positive, got %d", width)
	}
	if depth <= 0 {
		return nil, fmt.Errorf("seeds: depth must be positive, got %d", depth)
	}
	n := width * width * depth
	if n/depth/width != width {
		return nil, fmt.Errorf("seeds: width*width*depth overflows int (width %d, depth %d)",
			width, depth)
	}
	return &WeightStream{
		rng:   NewPCG64(weight),
		scale: math.Sqrt(2.0 / float64(width)),
		left:  n,
	}, nil
}

// Len is the number of weights not yet yielded.
func (ws *WeightStream) Len() int { return ws.left }

// Next fills dst with the next len(dst) weights; there must be that many left.
func (ws *WeightStream) Next(dst []float32) {
	if len(dst) > ws.left {
		panic(fmt.Sprintf("seeds: %d weights asked for, %d left", len(dst), ws.left))
	}
	for i := range dst {
		dst[i] = float32(ws.rng.StandardNormal() * ws.scale)
	}
	ws.left -= len(dst)
}
