package report

import "math"

// histogram counts values in bins of width 2^exp anchored at 0, bin k
// holding [k·2^exp, (k+1)·2^exp), one value at a time, without knowing the range
// in advance: when the values outgrow fineBins bins it doubles the width,
// merging pairs of bins. Counts stay exact, memory stays at fineBins, and
// because every width is a power of two, histograms of different splits
// regroup onto one grid without splitting a bin, as display does.
type histogram struct {
	exp       int
	firstBin  int64   // index of counts[0]
	counts    []int64 // bins firstBin .. firstBin+len-1
	finite    int64   // finite values counted
	nonFinite int64   // NaN and ±Inf, counted apart
	min, max  float64
	sum       float64
}

// fineBins bounds a histogram's bins, 32 KiB of counts; display draws far fewer. The
// fine width is at least the range over fineBins, so a plot that leaves out
// a tail still resolves a bulk 1/100 of the full range in ~40 bins.
const fineBins = 4096

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
	if h.finite == 0 {
		h.exp = startExp(x)
		h.firstBin = int64(math.Floor(math.Ldexp(x, -h.exp)))
		h.counts = []int64{0}
		h.min, h.max = x, x
	}
	h.finite++
	h.sum += x
	h.min, h.max = min(h.min, x), max(h.max, x)
	f := math.Floor(math.Ldexp(x, -h.exp))
	for max(f, float64(h.lastBin()))-min(f, float64(h.firstBin)) >= fineBins {
		h.coarsen()
		f = math.Floor(math.Ldexp(x, -h.exp))
	}
	k := int64(f)
	switch {
	case k < h.firstBin:
		h.counts = append(make([]int64, h.firstBin-k), h.counts...)
		h.firstBin = k
	case k > h.lastBin():
		h.counts = append(h.counts, make([]int64, k-h.lastBin())...)
	}
	h.counts[k-h.firstBin]++
}

func (h *histogram) lastBin() int64 { return h.firstBin + int64(len(h.counts)) - 1 }

// coarsen doubles the bin width: bin k becomes bin ⌊k/2⌋.
func (h *histogram) coarsen() {
	lo := floorDiv(h.firstBin, 1)
	merged := make([]int64, floorDiv(h.lastBin(), 1)-lo+1)
	for i, c := range h.counts {
		merged[floorDiv(h.firstBin+int64(i), 1)-lo] += c
	}
	h.exp++
	h.firstBin = lo
	h.counts = merged
}

// floorDiv is ⌊k / 2^s⌋, also for negative k.
func floorDiv(k int64, s int) int64 { return k >> s }

// mean is the mean of the finite values, NaN when there are none.
func (h *histogram) mean() float64 {
	if h.finite == 0 {
		return math.NaN()
	}
	return h.sum / float64(h.finite)
}

// grid is the bins a plot shows: count bins of width starting at first·width.
type grid struct {
	width float64
	first int64
	count int
}

func (g grid) edge(i int) float64 { return float64(g.first+int64(i)) * g.width }

// display regroups hs onto one grid of at most maxBins bins: the finest
// power-of-two width no finer than any of theirs. The grid covers every
// value from the smallest up to, at least, the keep quantile of each
// histogram, all of them for keep = 1. The values beyond the grid's right edge
// are left out of the counts and returned per histogram in beyond, so that
// a long thin tail does not squeeze the bulk of a distribution into a
// couple of bins. Each count is exact: a fine bin lies wholly inside one
// grid bin. With no values anywhere the grid has no bins, and an empty
// histogram has nil counts.
func display(
	hs []*histogram,
	maxBins int,
	keep float64,
) (g grid, counts [][]int64, beyond []int64) {
	var lo, cut float64 // the grid covers [lo, cut) at least
	exp := math.MinInt
	any := false
	for _, h := range hs {
		if h.finite == 0 {
			continue
		}
		c := math.Nextafter(h.max, math.Inf(1))
		if keep < 1 {
			c = min(c, h.quantileEdge(keep))
		}
		if !any {
			lo, cut = h.min, c
		}
		any = true
		lo, cut = min(lo, h.min), max(cut, c)
		exp = max(exp, h.exp)
	}
	counts, beyond = make([][]int64, len(hs)), make([]int64, len(hs))
	if !any {
		return grid{}, counts, beyond
	}
	span := func() (int64, int64) {
		return int64(math.Floor(math.Ldexp(lo, -exp))), int64(math.Ceil(math.Ldexp(cut, -exp)))
	}
	for a, b := span(); b-a > int64(maxBins); a, b = span() {
		exp++
	}
	a, b := span()
	g = grid{width: math.Ldexp(1, exp), first: a, count: int(b - a)}
	for i, h := range hs {
		if h.finite == 0 {
			continue
		}
		counts[i] = make([]int64, g.count)
		for j, c := range h.counts {
			if k := floorDiv(h.firstBin+int64(j), exp-h.exp) - g.first; k < int64(g.count) {
				counts[i][k] += c
			} else {
				beyond[i] += c
			}
		}
	}
	return g, counts, beyond
}

// quantileEdge is the right edge of the fine bin in which the fraction q of
// the values is reached: at least q of them lie below it.
func (h *histogram) quantileEdge(q float64) float64 {
	need := int64(math.Ceil(q * float64(h.finite)))
	seen := int64(0)
	for j, c := range h.counts {
		if seen += c; seen >= need {
			return math.Ldexp(float64(h.firstBin+int64(j)+1), h.exp)
		}
	}
	return math.Ldexp(float64(h.lastBin()+1), h.exp)
}
