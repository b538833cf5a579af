package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func histOf(xs ...float64) *histogram {
	h := &histogram{}
	for _, x := range xs {
		h.add(x)
	}
	return h
}

func TestHistogramOfHandPickedValuesHasTheCountsWorkedOutByHand(t *testing.T) {
	// At most 4 bins for [0, 3.9]: width 1, bins [0,1) [1,2) [2,3) [3,4).
	g, counts, _ := display([]*histogram{histOf(0, 0, 0.5, 1.5, 3.9)}, 4, 1)
	if g.width != 1 || g.first != 0 || g.count != 4 {
		t.Fatalf("grid %+v, want width 1 from 0 with 4 bins", g)
	}
	if want := []int64{3, 1, 0, 1}; !slices.Equal(counts[0], want) {
		t.Errorf("counts %v, want %v", counts[0], want)
	}
	// A second split on the same grid: its values land in the same bins.
	g, counts, _ = display([]*histogram{histOf(0.25, 0.75), histOf(-0.5, 1.25)}, 8, 1)
	if g.width != 0.25 || g.first != -2 || g.count != 8 {
		t.Fatalf("grid %+v, want width 1/4 from -1/2 with 8 bins", g)
	}
	want := [][]int64{{0, 0, 0, 1, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 1}}
	if !slices.Equal(counts[0], want[0]) || !slices.Equal(counts[1], want[1]) {
		t.Errorf("counts %v, want %v", counts, want)
	}
}

func TestHistogramCountsEveryValueInTheBinItFallsIn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sources := map[string]func() float64{
		"post-ReLU means": func() float64 { return max(0, rng.NormFloat64()) },
		"both signs":      func() float64 { return rng.NormFloat64() * 1e3 },
		"heavy tail":      func() float64 { return math.Exp(5 * rng.NormFloat64()) },
		"one value":       func() float64 { return 0.3 },
		"tiny then larger": func() float64 {
			return rng.Float64() * math.Pow(10, float64(rng.IntN(30)-20))
		},
	}
	for name, draw := range sources {
		t.Run(name, func(t *testing.T) {
			var splits [][]float64
			var hs []*histogram
			for range 3 {
				xs := make([]float64, 1+rng.IntN(5000))
				for i := range xs {
					xs[i] = draw()
				}
				splits = append(splits, xs)
				hs = append(hs, histOf(xs...))
			}
			hs[1].add(math.NaN())
			hs[1].add(math.Inf(1))
			g, counts, _ := display(hs, 40, 1)
			if g.count < 1 || g.count > 40 {
				t.Fatalf("%d bins, want 1..40", g.count)
			}
			for i, xs := range splits {
				want := make([]int64, g.count)
				for _, x := range xs {
					want[int(math.Floor(x/g.width))-int(g.first)]++ // panics if the grid misses x
				}
				if !slices.Equal(counts[i], want) {
					t.Errorf("split %d: counts %v, counted directly %v", i, counts[i], want)
				}
				if h := hs[i]; h.min != slices.Min(xs) || h.max != slices.Max(xs) {
					t.Errorf("split %d: min/max %g/%g, want %g/%g",
						i, h.min, h.max, slices.Min(xs), slices.Max(xs))
				}
			}
			if hs[1].nonFinite != 2 || hs[1].finite != int64(len(splits[1])) {
				t.Errorf("NaN and Inf: %d non-finite, %d counted; want 2 apart from the %d values",
					hs[1].nonFinite, hs[1].finite, len(splits[1]))
			}
			for _, h := range hs {
				if len(h.counts) > fineBins {
					t.Errorf("%d fine bins, the bound is %d", len(h.counts), fineBins)
				}
			}
		})
	}
}

func TestDisplayOfNoValuesHasNoBins(t *testing.T) {
	g, counts, _ := display([]*histogram{{}, {}}, 10, 1)
	if g.count != 0 || counts[0] != nil || counts[1] != nil {
		t.Errorf("grid %+v counts %v, want none", g, counts)
	}
}

func TestDisplayLeavesOutATailBeyondTheKeptQuantileAndCountsIt(t *testing.T) {
	// 99 values in [0, 0.99) and one far out at 100: the 99th percentile
	// is below 1, so 8 bins of 1/8 cover the bulk and the 100 lies beyond.
	var xs []float64
	for i := range 99 {
		xs = append(xs, float64(i)/100)
	}
	h := histOf(append(xs, 100)...)
	g, counts, beyond := display([]*histogram{h}, 8, 0.99)
	if g.width != 0.125 || g.first != 0 || g.count != 8 || beyond[0] != 1 {
		t.Fatalf("grid %+v, %d beyond; want width 1/8 from 0 with 8 bins and the 100 beyond",
			g, beyond[0])
	}
	want := make([]int64, 8)
	for _, x := range xs {
		want[int(x*8)]++
	}
	if !slices.Equal(counts[0], want) {
		t.Errorf("counts %v, counted directly %v", counts[0], want)
	}
	// Random splits: every value left of the grid's right edge is in its
	// bin, the rest counted beyond, and at least the kept fraction shown.
	rng := rand.New(rand.NewPCG(3, 4))
	var hs []*histogram
	var splits [][]float64
	for range 3 {
		xs := make([]float64, 1+rng.IntN(3000))
		for i := range xs {
			xs[i] = math.Exp(3 * rng.NormFloat64())
		}
		splits = append(splits, xs)
		hs = append(hs, histOf(xs...))
	}
	g, counts, beyond = display(hs, 30, 0.95)
	for i, xs := range splits {
		want := make([]int64, g.count)
		out := int64(0)
		for _, x := range xs {
			if x >= g.edge(g.count) {
				out++
				continue
			}
			want[int(math.Floor(x/g.width))-int(g.first)]++
		}
		if !slices.Equal(counts[i], want) || beyond[i] != out {
			t.Errorf("split %d: counts %v beyond %d, counted directly %v beyond %d",
				i, counts[i], beyond[i], want, out)
		}
		if float64(out) > 0.05*float64(len(xs)) {
			t.Errorf("split %d: %d of %d values beyond the grid, more than the 5 %% allowed",
				i, out, len(xs))
		}
	}
}
