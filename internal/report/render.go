package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/whestbake/whestbake/dataset"
)

// maxHistBins bounds the bins a histogram shows.
const maxHistBins = 48

// figures renders the report's PNGs, in dataset.ReportFigures' order.
func figures(st *Stats) ([][]byte, error) {
	fs, err := loadFonts()
	if err != nil {
		return nil, fmt.Errorf("report: loading the font: %w", err)
	}
	charts := map[string]func(*Stats) chart{
		"final_means.png":    finalMeansChart,
		"layer_means.png":    layerMeansChart,
		"layer_variance.png": layerVarianceChart,
		"dead_neurons.png":   deadChart,
		"avg_variance.png":   avgVarianceChart,
	}
	var out [][]byte
	for _, f := range dataset.ReportFigures {
		mk, ok := charts[f.File]
		if !ok {
			return nil, fmt.Errorf("report: no chart for figure %s", f.File)
		}
		ch := mk(st)
		ch.title = f.Caption
		png, err := ch.draw(fs)
		if err != nil {
			return nil, fmt.Errorf("report: drawing %s: %w", f.File, err)
		}
		out = append(out, png)
	}
	return out, nil
}

// histogramChart draws each split's histogram as the outline of its bars,
// as the fraction of the split's values in each bin, so that splits of
// different sizes compare. The x axis reaches the keep quantile of every
// split at least, as display grids it; the label says how much lies beyond.
func histogramChart(
	st *Stats,
	get func(*Split) *histogram,
	keep float64,
	xLabel, yLabel string,
) chart {
	hs := make([]*histogram, len(st.Splits))
	for i, s := range st.Splits {
		hs[i] = get(s)
	}
	g, counts, beyond := display(hs, binsFor(hs), keep)
	var out, all int64
	hi := math.Inf(-1)
	for i, h := range hs {
		out, all = out+beyond[i], all+h.finite
		if h.finite > 0 {
			hi = max(hi, h.max)
		}
	}
	if out > 0 {
		share := strconv.FormatFloat(100*float64(out)/float64(all), 'g', 2, 64)
		xLabel += fmt.Sprintf(" (%s %% lie beyond, up to %s)", share, num(hi))
	}
	ch := chart{xLabel: xLabel, yLabel: yLabel}
	top := 0.0
	for i, s := range st.Splits {
		if counts[i] == nil {
			continue
		}
		n := float64(hs[i].finite)
		pts := []point{{g.edge(0), 0}}
		for j, c := range counts[i] {
			f := float64(c) / n
			pts = append(pts, point{g.edge(j), f}, point{g.edge(j + 1), f})
			top = max(top, f)
		}
		pts = append(pts, point{g.edge(g.count), 0})
		ch.series = append(ch.series, series{name: s.Name, points: pts})
	}
	if g.count == 0 { // no values at all: an empty frame with sane axes
		g = grid{width: 1, count: 1}
	}
	ch.xMin, ch.xMax = g.edge(0), g.edge(g.count)
	ch.xTicks = niceTicks(ch.xMin, ch.xMax, 6)
	ch.yMin, ch.yMax = 0, 1.05*max(top, 0.01)
	ch.yTicks = niceTicks(ch.yMin, ch.yMax, 5)
	return ch
}

// binsFor is how many bins at most a histogram of hs shows: 4·∛n for the
// largest n, within [8, maxHistBins], so that a split of a few dozen MLPs
// is not drawn as a comb of single counts. That is twice Rice's rule, as
// power-of-two widths show between half and all of it.
func binsFor(hs []*histogram) int {
	var n int64
	for _, h := range hs {
		n = max(n, h.finite)
	}
	return min(maxHistBins, max(8, int(4*math.Cbrt(float64(n)))))
}

// finalMeansChart shows the final means up to their 99th percentile: deep
// networks have a few neurons with means many times the typical one, which
// would leave the bulk of the distribution in the first bins.
func finalMeansChart(st *Stats) chart {
	return histogramChart(st, func(s *Split) *histogram { return &s.FinalMeans }, 0.99,
		"final mean of a neuron", "fraction of neurons")
}

func avgVarianceChart(st *Stats) chart {
	return histogramChart(st, func(s *Split) *histogram { return &s.AvgVariance }, 1,
		"avg_variance of an MLP", "fraction of MLPs")
}

// layerMeansChart draws, per split, the mean of each layer's
// all_layer_means over every neuron of every MLP, on an axis from 0 so that
// small differences between layers look small.
func layerMeansChart(st *Stats) chart {
	mean := func(l Layer) float64 { return l.Mean }
	return layerChart(st, "mean activation (over MLPs and neurons)", mean, 0)
}

// layerVarianceChart draws, per split, the variance of each layer's
// all_layer_means over every neuron of every MLP: how far apart the neurons
// of a layer, in one MLP and across MLPs, sit.
func layerVarianceChart(st *Stats) chart {
	return layerChart(st, "variance of the activation (over MLPs and neurons)", Layer.Variance, 0)
}

// deadChart draws, per split, the fraction of each layer's neurons over
// all MLPs whose mean activation is exactly 0; a dataset with no dead
// neuron still gets a readable scale, up to 5 %.
func deadChart(st *Stats) chart {
	return layerChart(st, "fraction of neurons dead (mean exactly 0)", Layer.DeadFraction, 0.05)
}

// layerChart draws get of each layer against the layer number, a line with
// points per split, leaving out layers without a value, on a y axis from 0
// to at least minTop.
func layerChart(st *Stats, yLabel string, get func(Layer) float64, minTop float64) chart {
	ch := chart{xLabel: "layer", yLabel: yLabel}
	top, depth := 0.0, 0
	for _, s := range st.Splits {
		var pts []point
		for l, ly := range s.Layers {
			if y := get(ly); !math.IsNaN(y) {
				pts = append(pts, point{float64(l + 1), y})
				top = max(top, y)
			}
		}
		depth = max(depth, s.Depth)
		ch.series = append(ch.series, series{name: s.Name, points: pts, markers: true})
	}
	ch.yMin, ch.yMax = 0, max(1.1*top, minTop, 1e-6)
	ch.yTicks = niceTicks(ch.yMin, ch.yMax, 5)
	// Whole layer numbers, 1 to the depth, labelled every step-th.
	step := max(1, (depth+11)/12)
	for l := 1; l <= depth; l++ {
		label := ""
		if (l-1)%step == 0 || l == depth {
			label = strconv.Itoa(l)
		}
		ch.xTicks = append(ch.xTicks, tick{float64(l), label})
	}
	ch.xMin, ch.xMax = 0.5, float64(max(depth, 1))+0.5
	return ch
}
