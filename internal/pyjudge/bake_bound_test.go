package pyjudge

import (
	"math"
	"strconv"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// The bound of the bound cases: how far two bakes of one MLP can be apart
// when both compute x @ W in float32 but sum each output's W products in
// different orders, with or without fused multiply-adds (numpy on whatever
// kernel OpenBLAS picks for the host, at its thread count; whestbake's
// --dot-product fma). It is derived from the rounding of a k-sum, not from
// Monte Carlo error: both sides draw the same inputs.
//
// Any evaluation of a W-term dot product in binary32, in any order, with or
// without fused multiply-adds, lies within γ_W·Σ|x_i|·|w_i| of the exact
// one, γ_W = W·u/(1 − W·u), u = 2⁻²⁴ (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., §3.1: the inner product bound holds for
// every order of evaluation). With y the exact network's activations and
// ĥ a side's, δ = |ĥ − y|, ReLU being 1-Lipschitz, per sample and neuron j
// of layer l
//
//	δ_l,j ≤ Σ_i |W_l[i][j]| · (δ_l−1,i + γ_W·|ĥ_l−1,i|).
//
// Averaged over the N samples (E), E|ĥ_l−1,i| is the side's own stored
// mean for l ≥ 2 (activations are non-negative) and the inputs' mean |x|
// for l = 1, so t_l = Σ_i |W_l[i][j]|·(t_l−1,i + γ_W·E|ĥ_l−1,i|) bounds
// E δ_l,j, and two sides' means differ by at most t^A + t^B. In root mean
// square over the samples (‖·‖, Minkowski) the same recursion with
// ‖ĥ_l−1,i‖ ≤ ‖y_l−1,i‖ + τ_l−1,i bounds ‖δ_l,j‖ by τ_l,j; the exact
// network's ‖y‖ comes from the judge's float64 forward pass (reference).
// avg_variance = mean_j(E[ĥ_j²] − m_j²), and
// |E[ĥ^A²] − E[ĥ^B²]| ≤ ‖ĥ^A − ĥ^B‖·‖ĥ^A + ĥ^B‖ (Cauchy–Schwarz).
//
// The |W| in the recursion does not cancel as the signed weights do, so
// the bound grows by about 1.13·√W a layer: it is tight enough to tell one
// MLP from another at depth 1 to 3 (checkBoundedStats requires that of
// every bound case) and says little deeper, where the bits cases judge.
// The remaining roundings (the float64 sums over N samples, the float32
// means, the float64 finalisation, the evaluation of the bound itself, the
// float64 reference) are covered by the slack terms below: each is at most
// a few units of 2⁻⁵³·N or 2⁻²⁴ of the value it rounds.

const u32 = 0x1p-24

// gamma is γ_k for binary32.
func gamma(k int) float64 { ku := float64(k) * u32; return ku / (1 - ku) }

// boundSlack covers the float64 evaluation of a bound term (at most 2¹⁴
// products and sums, each rounded by 2⁻⁵³).
const boundSlack = 1 + 0x1p-30

// propagate is Σ_i |W_l[i][j]|·(prev_i + g·in_i) for every output j, plus
// W·2⁻¹⁴⁸ for the underflow of products near the subnormals.
func propagate(w []float32, width, l int, prev, in []float64, g float64) []float64 {
	out := make([]float64, width)
	layer := w[l*width*width : (l+1)*width*width]
	for i := 0; i < width; i++ {
		c := prev[i] + g*in[i]
		for j, x := range layer[i*width : (i+1)*width] {
			out[j] += math.Abs(float64(x)) * c
		}
	}
	for j := range out {
		out[j] = out[j]*boundSlack + float64(width)*0x1p-148
	}
	return out
}

// sideBound is, for one side with stored layer means means, t[l] ≥ E δ_l and
// tau[l] ≥ ‖δ_l‖ for every layer, per neuron.
func sideBound(w []float32, width, depth int, means []float32, ref referenceMLP) (t, tau [][]float64) {
	g := gamma(width)
	tPrev, tauPrev := make([]float64, width), make([]float64, width)
	for l := 0; l < depth; l++ {
		l1 := ref.MeanAbsInput
		if l > 0 {
			l1 = make([]float64, width)
			for i, m := range means[(l-1)*width : l*width] {
				// The stored float32 mean rounds a float64 sum over the
				// samples: the side's own E|ĥ| is at most 2⁻²² above it.
				l1[i] = float64(m)*(1+0x1p-22) + 0x1p-149
			}
		}
		rho := make([]float64, width)
		for i := range rho {
			rho[i] = ref.RMS[l][i]*boundSlack + tauPrev[i]*(1+0x1p-20)
		}
		tPrev = propagate(w, width, l, tPrev, l1, g)
		tauPrev = propagate(w, width, l, tauPrev, rho, g)
		t, tau = append(t, tPrev), append(tau, tauPrev)
	}
	return t, tau
}

// statsOf is one row's statistics from their hex bits.
type statsOf struct {
	means, final []float32
	variance     float64
}

func parseStats(t *testing.T, r dumpedRow) statsOf {
	t.Helper()
	f32 := func(hexBits []string) []float32 {
		out := make([]float32, len(hexBits))
		for i, h := range hexBits {
			b, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = math.Float32frombits(uint32(b))
		}
		return out
	}
	v, err := strconv.ParseUint(r.AvgVariance, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return statsOf{f32(r.LayerMeans), f32(r.FinalMeans), math.Float64frombits(v)}
}

// tolerance is the bound on |a − b| for every layer mean (indexed as
// all_layer_means) and for avg_variance, of two bakes of the MLP with
// weights w.
func tolerance(w []float32, width, depth int, a, b statsOf, ref referenceMLP) (means []float64, variance float64) {
	tA, tauA := sideBound(w, width, depth, a.means, ref)
	tB, tauB := sideBound(w, width, depth, b.means, ref)
	means = make([]float64, depth*width)
	for l := 0; l < depth; l++ {
		for j := 0; j < width; j++ {
			k := l*width + j
			scale := math.Abs(float64(a.means[k])) + math.Abs(float64(b.means[k]))
			means[k] = (tA[l][j]+tB[l][j])*boundSlack + 0x1p-23*scale + 0x1p-148
		}
	}
	last := depth - 1
	var sum float64
	for j := 0; j < width; j++ {
		rhoA := ref.RMS[depth][j]*boundSlack + tauA[last][j]*(1+0x1p-20)
		rhoB := ref.RMS[depth][j]*boundSlack + tauB[last][j]*(1+0x1p-20)
		fa, fb := float64(a.final[j]), float64(b.final[j])
		sum += (tauA[last][j]+tauB[last][j])*(rhoA+rhoB) + math.Abs(fa*fa-fb*fb) +
			0x1p-30*(rhoA*rhoA+rhoB*rhoB+fa*fa+fb*fb)
	}
	return means, sum / float64(width) * boundSlack
}

// checkBoundedStats requires every statistic of whest's rows theirs to lie
// within the bound of whestbake's rows ours (whose weights it reads from
// their parquet file, equal to whest's by then), and every row to fail the bound
// against another MLP's statistics: the bound must be able to tell them
// apart.
func checkBoundedStats(t *testing.T, c bakeCase, theirs, ours []dumpedRow, parquet string, ref []referenceMLP) {
	t.Helper()
	_, _, rows, err := dataset.ReadParquet(parquet)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := range theirs {
		a, b := parseStats(t, theirs[i]), parseStats(t, ours[i])
		for side, s := range []statsOf{a, b} {
			for j, f := range s.final {
				if math.Float32bits(f) != math.Float32bits(s.means[(c.depth-1)*c.width+j]) {
					t.Errorf("mlp %d, side %d: final_means[%d] is not the last layer's mean", i, side, j)
				}
			}
		}
		means, variance := tolerance(rows[i].Weights, c.width, c.depth, a, b, ref[i])
		for k, tol := range means {
			d := math.Abs(float64(a.means[k]) - float64(b.means[k]))
			worst = max(worst, d/tol)
			if d > tol {
				t.Errorf("mlp %d: all_layer_means[%d] whest %v, whestbake %v: |Δ| %.3g beyond the bound %.3g",
					i, k, a.means[k], b.means[k], d, tol)
			}
		}
		d := math.Abs(a.variance - b.variance)
		worst = max(worst, d/variance)
		if d > variance {
			t.Errorf("mlp %d: avg_variance whest %v, whestbake %v: |Δ| %.3g beyond the bound %.3g",
				i, a.variance, b.variance, d, variance)
		}
		if len(theirs) > 1 {
			other := parseStats(t, ours[(i+1)%len(ours)])
			if !outside(a, other, rows[i].Weights, c, ref[i]) {
				t.Errorf("mlp %d: another MLP's statistics lie within its bound: the bound tells nothing", i)
			}
		}
	}
	t.Logf("largest |Δ| / bound: %.2g", worst)
}

// outside reports whether some statistic of b lies beyond a's bound.
func outside(a, b statsOf, w []float32, c bakeCase, ref referenceMLP) bool {
	means, variance := tolerance(w, c.width, c.depth, a, b, ref)
	for k, tol := range means {
		if math.Abs(float64(a.means[k])-float64(b.means[k])) > tol {
			return true
		}
	}
	return math.Abs(a.variance-b.variance) > variance
}
