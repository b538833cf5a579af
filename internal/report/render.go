package report

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/whestbake/whestbake/dataset"
)

// Every figure is FigureWidth × FigureHeight pixels. gonum/plot draws with
// its embedded Liberation fonts and a pure-Go rasteriser, and PNG encoding
// has no timestamp, so the same statistics give the same bytes.
const (
	FigureWidth  = 800
	FigureHeight = 450
	dpi          = 96
	// maxHistBins bounds the bins a histogram shows.
	maxHistBins = 48
)

// figures renders the report's PNGs, in dataset.ReportFigures' order.
func figures(st *Stats) ([][]byte, error) {
	draws := map[string]func(*Stats) (*plot.Plot, error){
		"final_means.png":    finalMeansPlot,
		"layer_means.png":    layerMeansPlot,
		"layer_variance.png": layerVariancePlot,
		"dead_neurons.png":   deadPlot,
		"avg_variance.png":   avgVariancePlot,
	}
	var out [][]byte
	for _, f := range dataset.ReportFigures {
		mk, ok := draws[f.File]
		if !ok {
			return nil, fmt.Errorf("report: no drawing for figure %s", f.File)
		}
		p, err := mk(st)
		if err != nil {
			return nil, fmt.Errorf("report: drawing %s: %w", f.File, err)
		}
		p.Title.Text = f.Caption
		png, err := encodePNG(p, st)
		if err != nil {
			return nil, fmt.Errorf("report: drawing %s: %w", f.File, err)
		}
		out = append(out, png)
	}
	return out, nil
}

// encodePNG draws p with a margin all round and its legend (the split
// names) in a column to the right of the axes, where it hides no data.
func encodePNG(p *plot.Plot, st *Stats) ([]byte, error) {
	pt := func(px int) vg.Length { return vg.Length(px) * vg.Inch / dpi }
	c := vgimg.NewWith(vgimg.UseWH(pt(FigureWidth), pt(FigureHeight)), vgimg.UseDPI(dpi))
	margin := vg.Points(10)
	dc := draw.Crop(draw.New(c), margin, -margin, margin, -margin)
	legend := p.Legend
	p.Legend = plot.NewLegend()
	var legendWidth vg.Length
	for _, s := range st.Splits {
		legendWidth = max(legendWidth, legend.TextStyle.Width(s.Name))
	}
	// At most a quarter of the width: a very long split name then runs into
	// the plot's right edge rather than squeezing the plot to nothing.
	legendWidth = min(legendWidth+legend.ThumbnailWidth+2*margin, dc.Size().X/4)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	titleHeight := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	legend.Draw(draw.Crop(dc, dc.Size().X-legendWidth, 0, 0, -titleHeight))
	// Default compression: the best is ~9× slower (0.3 s a figure) for 4 %
	// fewer bytes.
	var b bytes.Buffer
	if err := png.Encode(&b, c.Image()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.Legend.Top = true
	p.Title.Padding = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p
}

func seriesStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1.5), Dashes: plotutil.Dashes(i)}
}

// histogramPlot draws each split's histogram as the outline of its bars,
// as the fraction of the split's values in each bin, so that splits of
// different sizes compare. The x axis reaches the keep quantile of every
// split at least (display); the label says how much lies beyond.
func histogramPlot(st *Stats, get func(*Split) *histogram, keep float64, xLabel, yLabel string) (*plot.Plot, error) {
	hs := make([]*histogram, len(st.Splits))
	for i, s := range st.Splits {
		hs[i] = get(s)
	}
	g, counts, beyond := display(hs, binsFor(hs), keep)
	var out, all int64
	hi := math.Inf(-1)
	for i, h := range hs {
		out, all = out+beyond[i], all+h.n
		if h.n > 0 {
			hi = max(hi, h.max)
		}
	}
	if out > 0 {
		xLabel += fmt.Sprintf(" (%s %% lie beyond, up to %s)", strconv.FormatFloat(100*float64(out)/float64(all), 'g', 2, 64), num(hi))
	}
	p := newPlot(xLabel, yLabel)
	for i, s := range st.Splits {
		if counts[i] == nil {
			continue
		}
		n := float64(hs[i].n)
		pts := plotter.XYs{{X: g.edge(0), Y: 0}}
		for j, c := range counts[i] {
			f := float64(c) / n
			pts = append(pts, plotter.XY{X: g.edge(j), Y: f}, plotter.XY{X: g.edge(j + 1), Y: f})
		}
		pts = append(pts, plotter.XY{X: g.edge(g.count), Y: 0})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesStyle(i)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	p.Y.Min, p.Y.Max = 0, 1.05*p.Y.Max
	return p, nil
}

// binsFor is how many bins at most a histogram of hs shows: 4·∛n for the
// largest n (twice Rice's rule, as power-of-two widths show between half
// and all of it), within [8, maxHistBins], so that a split of a few dozen
// MLPs is not drawn as a comb of single counts.
func binsFor(hs []*histogram) int {
	var n int64
	for _, h := range hs {
		n = max(n, h.n)
	}
	return min(maxHistBins, max(8, int(4*math.Cbrt(float64(n)))))
}

// finalMeansPlot shows the final means up to their 99th percentile: deep
// networks have a few neurons with means many times the typical one, which
// would leave the bulk of the distribution in the first bins.
func finalMeansPlot(st *Stats) (*plot.Plot, error) {
	return histogramPlot(st, func(s *Split) *histogram { return &s.FinalMeans }, 0.99,
		"final mean of a neuron", "fraction of neurons")
}

func avgVariancePlot(st *Stats) (*plot.Plot, error) {
	return histogramPlot(st, func(s *Split) *histogram { return &s.AvgVariance }, 1,
		"avg_variance of an MLP", "fraction of MLPs")
}

// layerMeansPlot draws, per split, the mean of each layer's
// all_layer_means over all (MLP, neuron) pairs.
func layerMeansPlot(st *Stats) (*plot.Plot, error) {
	p, err := layerPlot(st, "mean activation (over MLPs and neurons)", func(l Layer) float64 { return l.Mean })
	if err != nil {
		return nil, err
	}
	// From 0, so that small differences between layers look small.
	p.Y.Min = 0
	return p, nil
}

// layerVariancePlot draws, per split, the variance of each layer's
// all_layer_means over all (MLP, neuron) pairs: how far apart the neurons
// of a layer, in one MLP and across MLPs, sit.
func layerVariancePlot(st *Stats) (*plot.Plot, error) {
	p, err := layerPlot(st, "variance of the activation (over MLPs and neurons)", Layer.Variance)
	if err != nil {
		return nil, err
	}
	p.Y.Min = 0
	return p, nil
}

// layerPlot draws get of each layer against the layer number, a line with
// points per split; layers without a value are left out.
func layerPlot(st *Stats, yLabel string, get func(Layer) float64) (*plot.Plot, error) {
	p := newPlot("layer", yLabel)
	top := 0.0
	for i, s := range st.Splits {
		var line plotter.XYs
		for l, ly := range s.Layers {
			if y := get(ly); !math.IsNaN(y) {
				line = append(line, plotter.XY{X: float64(l + 1), Y: y})
				top = max(top, y)
			}
		}
		if len(line) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(line)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesStyle(i)
		pts.Color = plotutil.Color(i)
		p.Add(l, pts)
		p.Legend.Add(s.Name, l, pts)
	}
	p.Y.Max = 1.1 * top
	layerAxis(p, st)
	return p, nil
}

// deadPlot draws, per split, the fraction of each layer's neurons (over all
// MLPs) whose mean activation is exactly 0.
func deadPlot(st *Stats) (*plot.Plot, error) {
	p, err := layerPlot(st, "fraction of neurons dead (mean exactly 0)", Layer.DeadFraction)
	if err != nil {
		return nil, err
	}
	// A dataset with no dead neuron still gets a readable scale.
	p.Y.Min, p.Y.Max = 0, max(p.Y.Max, 0.05)
	return p, nil
}

// layerAxis labels the x axis with whole layer numbers, 1 to the depth.
func layerAxis(p *plot.Plot, st *Stats) {
	depth := 0
	for _, s := range st.Splits {
		depth = max(depth, s.Depth)
	}
	step := max(1, (depth+11)/12)
	var ticks []plot.Tick
	for l := 1; l <= depth; l++ {
		label := ""
		if (l-1)%step == 0 || l == depth {
			label = strconv.Itoa(l)
		}
		ticks = append(ticks, plot.Tick{Value: float64(l), Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0.5, float64(depth)+0.5
}
