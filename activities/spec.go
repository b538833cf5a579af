package activities

import (
	"github.com/whestbake/whestbake/gpuengine"
)

// Shape is what every MLP of a bake shares; it travels in workflow input.
type Shape struct {
	Width, Depth int
	NSamples     int64
	Sampler      string
	Dot          string `json:",omitempty"` // numpy sampler only
	ChunkSize    int    `json:",omitempty"`
}

// Spec is the engine spec of the shape.
func (s Shape) Spec(threads int) gpuengine.Spec {
	return gpuengine.Spec{Width: s.Width, Depth: s.Depth, NSamples: s.NSamples,
		Sampler: gpuengine.Sampler(s.Sampler), Dot: gpuengine.DotProduct(s.Dot), ChunkSize: s.ChunkSize, Threads: threads}
}
