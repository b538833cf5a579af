package report

import (
	"encoding/json"
	"fmt"
)

// The JSON of a Split: every number that its figures and table are drawn
// from, so that a split's statistics gathered where its rows are merged,
// in a bake's MergeSplit, render, wherever they are read back, into the same
// bytes as statistics gathered from the rows there. Go writes a float64 in
// the fewest digits that read back as the same float64, so the round trip
// is exact; Config and NMLPs come from the metadata, not from here.
type splitJSON struct {
	Name        string      `json:"name"`
	Width       int         `json:"width"`
	Depth       int         `json:"depth"`
	FinalMeans  histJSON    `json:"final_means"`
	AvgVariance histJSON    `json:"avg_variance"`
	Layers      []layerJSON `json:"layers"`
}

type histJSON struct {
	Exp       int     `json:"exp"`
	FirstBin  int64   `json:"first_bin"`
	Counts    []int64 `json:"counts"`
	Finite    int64   `json:"finite"`
	NonFinite int64   `json:"non_finite"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
	Sum       float64 `json:"sum"`
}

type layerJSON struct {
	Finite    int64   `json:"finite"`
	NonFinite int64   `json:"non_finite"`
	Mean      float64 `json:"mean"`
	SumSqDev  float64 `json:"sum_sq_dev"`
	Dead      int64   `json:"dead"`
}

func (h *histogram) toJSON() histJSON {
	return histJSON{h.exp, h.firstBin, h.counts, h.finite, h.nonFinite, h.min, h.max, h.sum}
}

// fromJSON takes j if it is a histogram that add could have made: bins
// within fineBins that count the finite values.
func (h *histogram) fromJSON(j histJSON, what string) error {
	var n int64
	for _, c := range j.Counts {
		if c < 0 {
			return fmt.Errorf("%s: a negative count", what)
		}
		n += c
	}
	if len(j.Counts) > fineBins || n != j.Finite || j.NonFinite < 0 ||
		(j.Finite > 0) != (len(j.Counts) > 0) {
		return fmt.Errorf("%s: %d bins counting %d values, for %d finite values",
			what, len(j.Counts), n, j.Finite)
	}
	*h = histogram{j.Exp, j.FirstBin, j.Counts, j.Finite, j.NonFinite, j.Min, j.Max, j.Sum}
	return nil
}

// MarshalJSON writes every number of s's statistics exactly.
func (s *Split) MarshalJSON() ([]byte, error) {
	j := splitJSON{
		Name: s.Name, Width: s.Width, Depth: s.Depth,
		FinalMeans: s.FinalMeans.toJSON(), AvgVariance: s.AvgVariance.toJSON(),
	}
	for _, l := range s.Layers {
		j.Layers = append(j.Layers, layerJSON{l.Finite, l.NonFinite, l.Mean, l.sumSqDev, l.Dead})
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads statistics MarshalJSON wrote, refusing any that
// Add could not have gathered.
func (s *Split) UnmarshalJSON(data []byte) error {
	var j splitJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.Width <= 0 || j.Depth <= 0 || len(j.Layers) != j.Depth {
		return fmt.Errorf("split statistics of %q: width %d, depth %d, %d layers",
			j.Name, j.Width, j.Depth, len(j.Layers))
	}
	out := Split{Name: j.Name, Width: j.Width, Depth: j.Depth}
	if err := out.FinalMeans.fromJSON(j.FinalMeans, "final_means"); err != nil {
		return err
	}
	if err := out.AvgVariance.fromJSON(j.AvgVariance, "avg_variance"); err != nil {
		return err
	}
	for _, l := range j.Layers {
		out.Layers = append(out.Layers, Layer{
			Finite: l.Finite, NonFinite: l.NonFinite, Mean: l.Mean, sumSqDev: l.SumSqDev, Dead: l.Dead,
		})
	}
	*s = out
	return nil
}
