package bake

import (
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
)

// Version is whestbake's version as recorded in metadata, bumped by hand with
// each release (builds are not stamped: two workers built from one release
// must record the same version).
const Version = "0.2.0"

// Metadata describes a bake of plan by an engine, created at now.
func Metadata(p Plan, d gpuengine.Description, now time.Time) dataset.Metadata {
	chunk := p.Spec.ChunkSize
	switch {
	case p.Spec.Sampler == bakeapi.SamplerNumpy:
		chunk = gpuengine.NumpyChunk(p.Spec.Width)
	case chunk == 0:
		chunk = gpuengine.DefaultPhiloxChunk
	}
	var salt *dataset.SaltRecord
	if p.Spec.Protocol() == bakeapi.SeedProtocolV4 {
		salt = &dataset.SaltRecord{Digest: p.Spec.Salt.SHA256, ID: p.Spec.Salt.ID}
		if !p.Spec.Salt.Withhold {
			salt.Hex = p.Salt.Hex()
		}
	}
	return dataset.NewBakeMetadata(dataset.BakeInfo{
		CreatedAt:        now,
		Split:            p.Split,
		Config:           p.Config,
		TotalMLPs:        p.NMLPs,
		Range:            [2]int{p.Range.Start, p.Range.End},
		NSamples:         p.Spec.NSamples,
		Width:            p.Spec.Width,
		Depth:            p.Spec.Depth,
		Hardware:         dataset.HostHardware(),
		WhestbakeVersion: Version,
		Sampler:          string(p.Spec.Sampler),
		Engine:           d.Engine + "/" + d.Kernel,
		AlgorithmVersion: p.Spec.Algorithm(),
		DotProduct:       string(p.Spec.Dot),
		Device:           d.Device,
		Driver:           d.Driver,
		ChunkSize:        chunk,
		SeedFileSHA256:   p.Seeds.SHA256,
		Salt:             salt,
	})
}

// numpyFlopBudget is the budget whestbench's CPU bake samples each MLP
// under (dataset.py create_dataset: flops.BudgetContext(flop_budget=int(1e15))),
// which its rows record as flop_budget.
const numpyFlopBudget = 1_000_000_000_000_000

// Breakdown is the row's sampling_budget_breakdown: whestbench's closed-form
// FLOP model for the sampler's chunking. Timings are left at zero so a row is a
// pure function of its seed and shape (slices and re-bakes are byte-identical);
// wall times are reported by the CLI instead. A numpy row records the budget
// of whestbench's CPU bake, a philox row none (flop_budget = flops_used), as
// whestbench's torch backend does.
func Breakdown(spec bakeapi.Spec) string {
	if spec.Sampler == bakeapi.SamplerNumpy {
		return dataset.Breakdown(spec.Width, spec.Depth, spec.NSamples,
			gpuengine.NumpyChunk(spec.Width), 0, dataset.FlopBudget(numpyFlopBudget))
	}
	return dataset.Breakdown(spec.Width, spec.Depth, spec.NSamples, gpuengine.PhiloxTile, 0)
}
