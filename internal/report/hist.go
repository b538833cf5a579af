package report

import "math"

// histogram counts values in bins of width 2^exp anchored at 0 (bin k holds
// [k·2^exp, (k+1)·2^exp)), one value at a time, without knowing the range
// in advance: when the values outgrow fineBins bins it doubles the width,
// merging pairs of bins. Counts stay exact, memory stays at fineBins, and
// because every width is a power of two, histograms of different splits
// regroup onto one grid without splitting a bin (display).
type histogram struct {
	exp       int
	lo        int64   // index of counts[0]
	counts    []int64 // bins lo .. lo+len-1
	n         int64   // finite values counted
	nonFinite int64   // NaN and ±Inf, counted apart
	min, max  float64
	sum       float64
}

// fineBins bounds a histogram's bins; display draws far fewer.
const fineBins = 512

// startExp is the first width: 2^-12 of the first value's magnitude, so
// that the first few values rarely coarsen the grid.
func startExp(x float64) int {
	if x == 0 {
		return -40
	}
	_, e := math.Frexp(x)
	return e - 12
}

func (h *histogram) add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		h.nonFinite++
		return
	}
	if h.n == 0 {
		h.exp = startExp(x)
		h.lo = int64(math.Floor(math.Ldexp(x, -h.exp)))
		h.counts = []int64{0}
		h.min, h.max = x, x
	}
	h.n++
	h.sum += x
	h.min, h.max = min(h.min, x), max(h.max, x)
	f := math.Floor(math.Ldexp(x, -h.exp))
	for max(f, float64(h.hi()))-min(f, float64(h.lo)) >= fineBins {
		h.coarsen()
		f = math.Floor(math.Ldexp(x, -h.exp))
	}
	k := int64(f)
	switch {
	case k < h.lo:
		h.counts = append(make([]int64, h.lo-k), h.counts...)
		h.lo = k
	case k > h.hi():
		h.counts = append(h.counts, make([]int64, k-h.hi())...)
	}
	h.counts[k-h.lo]++
}

func (h *histogram) hi() int64 { return h.lo + int64(len(h.counts)) - 1 }

// coarsen doubles the bin width: bin k becomes bin ⌊k/2⌋.
func (h *histogram) coarsen() {
	lo := floorDiv(h.lo, 1)
	merged := make([]int64, floorDiv(h.hi(), 1)-lo+1)
	for i, c := range h.counts {
		merged[floorDiv(h.lo+int64(i), 1)-lo] += c
	}
	h.exp++
	h.lo, h.counts = lo, merged
}

// floorDiv is ⌊k / 2^s⌋, also for negative k.
func floorDiv(k int64, s int) int64 { return k >> s }

// mean is the mean of the finite values, NaN when there are none.
func (h *histogram) mean() float64 {
	if h.n == 0 {
		return math.NaN()
	}
	return h.sum / float64(h.n)
}

// grid is the bins a plot shows: count bins of width starting at lo·width.
type grid struct {
	width float64
	lo    int64
	count int
}

func (g grid) edge(i int) float64 { return float64(g.lo+int64(i)) * g.width }

// display regroups hs onto one grid of at most maxBins bins that covers all
// their values: the finest power-of-two width no finer than any of theirs.
// It returns the grid and each histogram's counts on it (nil for an empty
// histogram); with no values anywhere the grid has no bins.
func display(hs []*histogram, maxBins int) (grid, [][]int64) {
	var lo, hi float64
	exp, any := math.MinInt, false
	for _, h := range hs {
		if h.n == 0 {
			continue
		}
		if !any {
			lo, hi = h.min, h.max
		}
		any = true
		lo, hi, exp = min(lo, h.min), max(hi, h.max), max(exp, h.exp)
	}
	out := make([][]int64, len(hs))
	if !any {
		return grid{}, out
	}
	bin := func(x float64) float64 { return math.Floor(math.Ldexp(x, -exp)) }
	for bin(hi)-bin(lo)+1 > float64(maxBins) {
		exp++
	}
	g := grid{width: math.Ldexp(1, exp), lo: int64(bin(lo))}
	g.count = int(int64(bin(hi)) - g.lo + 1)
	for i, h := range hs {
		if h.n == 0 {
			continue
		}
		out[i] = make([]int64, g.count)
		for j, c := range h.counts {
			out[i][floorDiv(h.lo+int64(j), exp-h.exp)-g.lo] += c
		}
	}
	return g, out
}
