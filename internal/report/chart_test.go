package report

import (
	"bytes"
	"image/png"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// The step is the smallest 1, 2 or 5 × 10^k at least (hi − lo)/n, so a
// chart has at most n+1 labelled ticks, with as many decimals as the step.
func TestNiceTicksStepBy1_2Or5TimesAPowerOfTen(t *testing.T) {
	labels := func(ts []tick) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.label)
		}
		return out
	}
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []string
	}{
		{0, 0.55, 5, []string{"0.0", "0.2", "0.4"}},             // 0.11 → 0.2
		{0, 3.7, 6, []string{"0", "1", "2", "3"}},               // 0.62 → 1
		{-0.5, 1.25, 4, []string{"-0.5", "0.0", "0.5", "1.0"}},  // 0.44 → 0.5
		{0, 120, 5, []string{"0", "50", "100"}},                 // 24 → 50
		{0, 0.00105, 5, []string{"0.0000", "0.0005", "0.0010"}}, // 0.00021 → 0.0005
	} {
		if got := labels(niceTicks(c.lo, c.hi, c.n)); !slices.Equal(got, c.want) {
			t.Errorf("niceTicks(%g, %g, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

func TestFiguresOfSplitsWithoutValuesAreStillDrawn(t *testing.T) {
	// A split whose values are all NaN, one whose means are all 0, and a
	// split name longer than the legend's column.
	nan := &Split{
		Name:   "nan",
		Width:  1,
		Depth:  2,
		Layers: make([]Layer, 2),
	}
	zero := &Split{
		Name:   "a-very-long-split-name-that-does-not-fit-the-legend",
		Width:  1,
		Depth:  3,
		Layers: make([]Layer, 3),
	}
	for range 3 {
		nan.FinalMeans.add(nan0())
		nan.AvgVariance.add(nan0())
		zero.FinalMeans.add(0)
		zero.AvgVariance.add(0)
		for l := range zero.Layers {
			zero.Layers[l].add(0)
			nan.Layers[l%2].add(nan0())
		}
	}
	pngs, err := figures(&Stats{Info: &dataset.Info{}, Splits: []*Split{nan, zero}})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range pngs {
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", dataset.ReportFigures[i].File, err)
		}
	}
}

func nan0() float64 { var z float64; return z / z }
