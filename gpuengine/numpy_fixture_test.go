package gpuengine

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/seeds"
)

// Published values of whestbench's fixture datasets
// (https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures, copied to
// testdata/whestbench-fixtures), baked by whestbench's CPU backend on Apple
// Accelerate (FMA dot products). Decimal values are Python's shortest
// round-trip reprs, so they parse to exact bits.
type fixtureRow struct {
	streams   seeds.Streams
	width     int
	means     [][]string // some layers of all_layer_means; nil entries skipped
	avgVarStr string
}

func parse32(t *testing.T, s string) float32 {
	f, err := strconv.ParseFloat(s, 32)
	if err != nil {
		t.Fatal(err)
	}
	return float32(f)
}

func fixtureRows() map[string]fixtureRow {
	return map[string]fixtureRow{
		"single/1001": {seeds.DeriveV3(1001), 4, [][]string{
			{"0.5987451", "0.8463906", "0.245099", "0.52223223"},
			{"0.35644302", "0.00011175524", "0.005849282", "1.1584041"}}, "1.074743449815292"},
		"single/2002": {seeds.DeriveV3(2002), 4, nil, "0.10508618762833832"},
		"single/3003": {seeds.DeriveV3(3003), 4, nil, "0.18841978269100887"},
		"single/4004": {seeds.DeriveV3(4004), 4, nil, "0.868839627596548"},
		"v2-public/0": {seeds.DeriveV2(1, 0), 4, [][]string{
			{"0.8931163", "0.5841013", "0.28187528", "0.63678926"},
			{"0.0", "0.6620967", "0.3542428", "0.5804656"}}, "0.28817610643990704"},
		"v2-holdout/0": {seeds.DeriveV2(2, 0), 4, [][]string{
			{"0.54679346", "0.46544954", "0.4763736", "0.48283762"},
			{"0.9337328", "0.098810494", "0.038733795", "1.256707"}}, "0.8429806750017985"},
		"config-public/42000": {seeds.DeriveV3(42000), 8, [][]string{
			{"0.53142613", "0.40861842", "0.3944181", "0.39293003",
				"0.95357823", "0.7508027", "0.59968716", "0.48511332"},
			{"0.29502386", "1.4928069", "1.6131717", "0.07534067",
				"0.71118945", "0.8328028", "0.8972149", "1.8509154"}}, "1.099747296691382"},
		"config-public/42001": {seeds.DeriveV3(42001), 8, nil, "0.6747338400022169"},
		"config-holdout/99000": {seeds.DeriveV3(99000), 8, [][]string{nil,
			{"0.52916443", "0.03058873", "0.9482387", "0.86044663",
				"0.0490334", "0.091539815", "0.21856867", "0.54377306"}}, "0.4196682808811202"},
		"config-holdout/99001": {seeds.DeriveV3(99001), 8, nil, "0.38736196619919094"},
	}
}

func bakeFixture(t *testing.T, fr fixtureRow, dot bakeapi.DotProduct) Result {
	t.Helper()
	w, err := seeds.Weights(fr.width, 2, fr.streams.Weight)
	if err != nil {
		t.Fatal(err)
	}
	spec := bakeapi.Spec{
		Width:    fr.width,
		Depth:    2,
		NSamples: 100,
		Sampler:  bakeapi.SamplerNumpy,
		Dot:      dot,
	}
	job := Job{Weights: w, Sample: fr.streams.Sample}
	res, err := CPU{}.BakeMLP(context.Background(), spec, job, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestNumpySamplerReproducesFixturesBitExactly(t *testing.T) {
	for name, fr := range fixtureRows() {
		res := bakeFixture(t, fr, bakeapi.DotFMA)
		want, _ := strconv.ParseFloat(fr.avgVarStr, 64)
		if math.Float64bits(res.AvgVariance) != math.Float64bits(want) {
			t.Errorf(
				"%s: avg_variance %v (%#x), want %v (%#x)",
				name,
				res.AvgVariance,
				math.Float64bits(res.AvgVariance),
				want,
				math.Float64bits(want),
			)
		}
		for l, layer := range fr.means {
			for j, s := range layer {
				got := res.LayerMeans[l*fr.width+j]
				if math.Float32bits(got) != math.Float32bits(parse32(t, s)) {
					t.Errorf("%s: layer %d neuron %d mean %v, want %s", name, l, j, got, s)
				}
			}
		}
	}
}

// The multiply-then-add variant is a different, documented contract: it must
// stay within float32 rounding of the FMA results (and differ somewhere, or the
// option would be meaningless).
func TestNumpyMulAddIsCloseButDistinct(t *testing.T) {
	differs := false
	for name, fr := range fixtureRows() {
		a, b := bakeFixture(t, fr, bakeapi.DotFMA), bakeFixture(t, fr, bakeapi.DotMulAdd)
		for i := range a.LayerMeans {
			d := math.Abs(float64(a.LayerMeans[i] - b.LayerMeans[i]))
			if d > 1e-5*math.Max(1, math.Abs(float64(a.LayerMeans[i]))) {
				t.Errorf("%s: mean %d differs by %g", name, i, d)
			}
			differs = differs || a.LayerMeans[i] != b.LayerMeans[i]
		}
		differs = differs || a.AvgVariance != b.AvgVariance
	}
	if !differs {
		t.Error("muladd gave the same bits as fma on every fixture row")
	}
}
