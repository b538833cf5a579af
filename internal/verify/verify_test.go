package verify_test

import (
	"context"
	"math"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/verify"
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
	ids := mlps.Identities([]int64{11, 12, 13, 14}, seeds.Salt{})
	var baked []dataset.Row
	baker := rows.Baker{Engine: gpuengine.CPU{}, Spec: spec, Threads: 2}
	err := baker.Stream(
		context.Background(),
		ids,
		bakeapi.Range{Start: 0, End: len(ids)},
		func(r dataset.Row) error {
			r.Weights = append([]float32(nil), r.Weights...)
			baked = append(baked, r)
			return nil
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	last := len(baked[1].Weights) - 1
	baked[1].Weights[last] = math.Float32frombits(math.Float32bits(baked[1].Weights[last]) ^ 1)
	baked[2].LayerMeans[0] += 0.5
	baked[3].Weights = baked[3].Weights[:last]

	info := verify.SplitInfo{Protocol: dataset.SeedProtocolV3Version, Spec: spec, Complete: true}
	checks := checksOf(t, info, []int{0, 1, 2, 3}, 2, baked)
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

// A tf32x3 row, where no GPU reruns it, is checked against the fp32 twin on the same
// inputs: within bakeapi.TF32x3MeanTolerance of each layer's largest mean it passes, a
// mean or avg_variance beyond fails.
func TestVerifierJudgesTF32x3AgainstFP32(t *testing.T) {
	spec := bakeapi.Spec{Width: 16, Depth: 3, NSamples: 512, Sampler: bakeapi.SamplerPhilox}
	ids := mlps.Identities([]int64{21, 22, 23, 24, 25}, seeds.Salt{})
	var baked []dataset.Row
	baker := rows.Baker{Engine: gpuengine.CPU{}, Spec: spec, Threads: 1}
	if err := baker.Stream(context.Background(), ids, bakeapi.Range{Start: 0, End: len(ids)},
		func(r dataset.Row) error {
			r.Weights = append([]float32(nil), r.Weights...)
			r.LayerMeans = append([]float32(nil), r.LayerMeans...)
			r.FinalMeans = append([]float32(nil), r.FinalMeans...)
			baked = append(baked, r)
			return nil
		}); err != nil {
		t.Fatal(err)
	}
	scale := func(r dataset.Row, l int) float32 {
		s := float32(0)
		for _, m := range r.LayerMeans[l*16 : (l+1)*16] {
			s = max(s, m)
		}
		return s
	}
	baked[1].LayerMeans[20] += 0.2 * bakeapi.TF32x3MeanTolerance * scale(baked[1], 1)
	baked[2].LayerMeans[5] += 3 * bakeapi.TF32x3MeanTolerance * scale(baked[2], 0)
	baked[3].AvgVariance *= 1 + 3*bakeapi.TF32x3VarianceTolerance
	baked[4].LayerMeans[40] -= 3 * bakeapi.TF32x3MeanTolerance * scale(baked[4], 2)
	baked[4].FinalMeans[8] = baked[4].LayerMeans[40]

	tf32 := spec
	tf32.Precision = bakeapi.PrecisionTF32x3
	info := verify.SplitInfo{Protocol: dataset.SeedProtocolV3Version, Spec: tf32, Complete: true}
	checks := checksOf(t, info, []int{0, 1, 2, 3, 4}, 1, baked)
	for i, ok := range []bool{true, true, false, false, false} {
		want := map[bool]string{true: verify.StatsTF32x3, false: "MISMATCH"}[ok]
		if c := checks[i]; c.Stats != want || c.OK != ok {
			t.Errorf("row %d: statistics %q (max |Δ| %g, tolerance %g), ok %v; want %q",
				i, c.Stats, c.MaxAbsDiff, c.Tolerance, c.OK, want)
		}
	}
}

// checksOf is what a Verifier of the MLPs picks, recomputing on threads,
// finds of the rows baked.
func checksOf(t *testing.T, info verify.SplitInfo, picks []int, threads int, baked []dataset.Row) []verify.Check {
	t.Helper()
	v, err := verify.NewVerifier(context.Background(), info, picks, 0, threads)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range baked {
		if err := v.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	checks, err := v.Checks()
	if err != nil {
		t.Fatal(err)
	}
	return checks
}
