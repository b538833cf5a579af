package bake_test

import (
	"context"
	"math"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/seeds"
)

// The verifier compares weights a stretch at a time; a row whose weights
// differ in one bit, or by one value missing, fails on its weights while its
// statistics are still recomputed from the right weights, and a row whose
// statistics differ fails on those alone.
func TestVerifierCatchesChangedWeightsAndStatistics(t *testing.T) {
	// 270,000 weights: several stretches.
	spec := bakeapi.Spec{
		Width:    300,
		Depth:    3,
		NSamples: 256,
		Sampler:  bakeapi.SamplerPhilox,
	}
	ids := bake.Identities([]int64{11, 12, 13, 14}, seeds.Salt{})
	var rows []dataset.Row
	baker := bake.Baker{Engine: gpuengine.CPU{}, Spec: spec, Threads: 2}
	err := baker.Stream(
		context.Background(),
		ids,
		bakeapi.Range{Start: 0, End: len(ids)},
		func(r dataset.Row) error {
			r.Weights = append([]float32(nil), r.Weights...)
			rows = append(rows, r)
			return nil
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	last := len(rows[1].Weights) - 1
	rows[1].Weights[last] = math.Float32frombits(math.Float32bits(rows[1].Weights[last]) ^ 1)
	rows[2].LayerMeans[0] += 0.5
	rows[3].Weights = rows[3].Weights[:last]

	info := bake.SplitInfo{Protocol: dataset.SeedProtocolV3Version, Spec: spec, Complete: true}
	v, err := bake.NewVerifier(context.Background(), info, []int{0, 1, 2, 3}, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := v.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	checks, err := v.Checks()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		weightsOK bool
		stats     string
	}{{true, "bit-exact"}, {false, "bit-exact"}, {true, "MISMATCH"}, {false, "bit-exact"}} {
		c := checks[i]
		if c.WeightsOK != want.weightsOK ||
			c.Stats != want.stats ||
			c.OK != (want.weightsOK && want.stats == "bit-exact") ||
			!c.NameOK {
			t.Errorf(
				"row %d: weights ok %v, statistics %q, ok %v, name ok %v; "+
					"want weights ok %v, statistics %q",
				i,
				c.WeightsOK,
				c.Stats,
				c.OK,
				c.NameOK,
				want.weightsOK,
				want.stats,
			)
		}
	}
}
