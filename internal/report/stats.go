package report

import (
	"math"

	"github.com/whestbake/whestbake/dataset"
)

// Split is what the report knows of one split, gathered one row at a time:
// its size does not grow with the number of rows.
type Split struct {
	Name         string
	Config       string
	NMLPs        int64
	Width, Depth int
	// FinalMeans holds every neuron of every MLP's final_means,
	// AvgVariance every MLP's avg_variance.
	FinalMeans, AvgVariance histogram
	Layers                  []Layer // all_layer_means, layer 1 first
}

// Layer sums up one layer of all_layer_means over every neuron of every MLP
// of a split: the mean activation of a neuron, its spread, and how many
// neurons are dead.
type Layer struct {
	Finite    int64 // finite values
	NonFinite int64
	// Mean and m2 are Welford's running mean and sum of squared deviations:
	// a layer's means can sit far from 0 with a small spread, where
	// Σx² − (Σx)²/n would cancel.
	Mean     float64
	sumSqDev float64
	// Dead counts neurons whose mean is exactly 0. all_layer_means holds
	// post-ReLU means of non-negative activations, so 0 means the neuron was
	// 0 on every sample: it never fired.
	Dead int64
}

func (l *Layer) add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		l.NonFinite++
		return
	}
	if x == 0 {
		l.Dead++
	}
	l.Finite++
	d := x - l.Mean
	l.Mean += d / float64(l.Finite)
	l.sumSqDev += d * (x - l.Mean)
}

// Variance is the population variance of the layer's finite values.
func (l Layer) Variance() float64 {
	if l.Finite == 0 {
		return math.NaN()
	}
	return l.sumSqDev / float64(l.Finite)
}

// DeadFraction is the fraction of the layer's neurons, of all MLPs, that
// are dead.
func (l Layer) DeadFraction() float64 {
	if n := l.Finite + l.NonFinite; n > 0 {
		return float64(l.Dead) / float64(n)
	}
	return math.NaN()
}

// NewSplit starts the statistics of split name, whose rows have width and
// depth, for Add: what a merge gathers as it writes the split's rows, so
// that its report needs no row read again in CombineSummaries.
func NewSplit(name string, width, depth int) *Split {
	return &Split{Name: name, Width: width, Depth: depth, Layers: make([]Layer, depth)}
}

// Add counts row r, the split's next, into its statistics.
func (s *Split) Add(r dataset.Row) {
	for _, v := range r.FinalMeans {
		s.FinalMeans.add(float64(v))
	}
	s.AvgVariance.add(r.AvgVariance)
	for l := range s.Layers {
		for _, v := range r.LayerMeans[l*s.Width : (l+1)*s.Width] {
			s.Layers[l].add(float64(v))
		}
	}
}

// Stats are the report's numbers for a dataset: its key facts from the
// metadata and each split's statistics.
type Stats struct {
	Info   *dataset.Info
	Splits []*Split
}

// compute streams every row of d, checking it as Scan does, into the
// statistics of its split; done, when not nil, is called after each row.
func compute(d *dataset.Dir, done func()) (*Stats, error) {
	st := &Stats{Info: d.Info}
	bySplit := map[*dataset.SplitData]*Split{}
	for i := range d.Splits {
		sd, info := &d.Splits[i], &d.Info.Splits[i]
		s := &Split{
			Name:   sd.Name,
			Config: info.HFConfig(),
			NMLPs:  info.NMLPs,
			Width:  sd.Width,
			Depth:  sd.Depth,
			Layers: make([]Layer, sd.Depth),
		}
		st.Splits = append(st.Splits, s)
		bySplit[sd] = s
	}
	err := d.Scan(func(sd *dataset.SplitData, r dataset.Row) error {
		bySplit[sd].Add(r)
		if done != nil {
			done()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
