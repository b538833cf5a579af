// Package compare decides whether two datasets hold the same ground truth
// (`whestbake dataset compare`): the check whestbench's docs ask a user to
// write by hand in numpy after a parallel, GPU or other-backend bake. Split
// by split and MLP by MLP (the same mlp_seed in the same place), either bit
// for bit (ModeExact) or within Monte Carlo error (ModeStat).
//
// Both datasets are streamed side by side, one row of each in memory.
package compare

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/whestbake/whestbake/dataset"
)

// Mode is how two datasets are compared.
type Mode string

const (
	// ModeExact: names, weights and means bit-identical, avg_variance
	// within numpy's isclose(rtol=1e-12, atol=1e-15), the tolerance
	// whestbench's docs give for it (sum_sq/n − mean² loses about an ULP).
	ModeExact Mode = "exact"
	// ModeStat: names and weights bit-identical (they do not depend on the
	// sampler), each neuron's mean within Monte Carlo error (see zScores).
	ModeStat Mode = "stat"
)

// The avg_variance tolerance of ModeExact (numpy.isclose's form).
const (
	varianceRTol = 1e-12
	varianceATol = 1e-15
)

// DefaultAlpha is ModeStat's overall false-alarm rate: the chance that two
// correct bakes of the same MLPs are called different. MaxAlpha is the
// largest accepted: it keeps the threshold at 1.96 or more (at least one
// neuron and one layer are tested), within the layer test's bound, which
// holds from 1.24 (see zScores).
const (
	DefaultAlpha = 1e-3
	MaxAlpha     = 0.1
)

// Input names the two datasets and how to compare them.
type Input struct {
	A, B string // dataset directories
	// Mode is "" to choose: ModeExact when every split of both datasets
	// was baked with the same sampler (whestbench: backend), algorithm
	// version and n_samples, ModeStat otherwise.
	Mode Mode
	// Alpha is ModeStat's overall false-alarm rate; 0 means DefaultAlpha.
	Alpha float64
	// Shown bounds the differences ModeExact records (the first ones);
	// 0 means 10.
	Shown int
}

// Result is the comparison. Same is the verdict: identical (ModeExact) or
// statistically equivalent (ModeStat).
type Result struct {
	A          string        `json:"a"`
	B          string        `json:"b"`
	Mode       Mode          `json:"mode"`
	ModeReason string        `json:"mode_reason"`
	Same       bool          `json:"same"`
	Splits     []SplitResult `json:"splits"`
	// Differences are the first differences found (ModeExact, and in both
	// modes names and weights), in row order.
	Differences []Difference `json:"differences"`
	// ModeStat: the overall false-alarm rate asked for, the number of
	// neurons and of layers compared, and the |z| (and ‖z_l‖) beyond which
	// a neuron (a layer) counts as different: Bonferroni over all of those
	// tests.
	Alpha     float64 `json:"alpha,omitempty"`
	Neurons   int64   `json:"neurons,omitempty"`
	Layers    int64   `json:"layers,omitempty"`
	Threshold float64 `json:"z_threshold,omitempty"`
}

// SplitResult is one split's comparison.
type SplitResult struct {
	Name string `json:"name"`
	MLPs int64  `json:"n_mlps"`
	// DifferentMLPs counts the MLPs with any difference (ModeExact), or
	// with a neuron beyond the threshold or other weights or names (ModeStat).
	DifferentMLPs int64 `json:"different_mlps"`
	// NSamplesA and NSamplesB are the datasets' sample counts.
	NSamplesA int64 `json:"n_samples_a"`
	NSamplesB int64 `json:"n_samples_b"`
	// MLPStats is ModeStat's per-MLP table, in row order.
	MLPStats []MLPStat `json:"mlps,omitempty"`
}

// MLPStat is one MLP's statistical comparison.
type MLPStat struct {
	MLPID int32   `json:"mlp_id"`
	Seed  int64   `json:"mlp_seed"`
	MaxZ  float64 `json:"max_abs_z"`
	// Layer and Neuron locate MaxZ.
	Layer  int `json:"layer"`
	Neuron int `json:"neuron"`
	// Beyond counts the neurons whose |z| exceeds the threshold.
	Beyond int `json:"beyond"`
	// LayerNorm is the largest over the layers of ‖z_l‖ = sqrt(Σ_j z_lj²),
	// at layer NormLayer; LayersBeyond counts the layers whose ‖z_l‖
	// exceeds the threshold (see zScores).
	LayerNorm    float64 `json:"max_layer_norm"`
	NormLayer    int     `json:"norm_layer"`
	LayersBeyond int     `json:"layers_beyond"`
	// Sigma is the per-neuron standard deviation estimate (see zScores).
	Sigma float64 `json:"sigma"`
}

// Difference is one value that differs.
type Difference struct {
	Split string `json:"split"`
	MLPID int32  `json:"mlp_id"`
	Seed  int64  `json:"mlp_seed"`
	Field string `json:"field"`
	// Index is the flat index into the field's array (-1 for a scalar).
	Index int    `json:"index"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// InputError is a pair of datasets that cannot be compared: different
// splits, shapes, MLP counts or seeds, or an unreadable dataset. The CLI
// exits 2 on it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Run compares in.A with in.B.
func Run(in Input) (*Result, error) {
	a, err := open("A", in.A)
	if err != nil {
		return nil, err
	}
	b, err := open("B", in.B)
	if err != nil {
		return nil, err
	}
	if err := pair(a, b, in.A, in.B); err != nil {
		return nil, err
	}
	res := &Result{A: in.A, B: in.B, Mode: in.Mode}
	res.Mode, res.ModeReason = chooseMode(a, b, in.Mode)
	if in.Shown <= 0 {
		in.Shown = 10
	}
	c := &comparer{res: res, shown: in.Shown}
	for i := range a.Splits {
		s := &a.Info.Splits[i]
		res.Splits = append(res.Splits, SplitResult{Name: s.Name, MLPs: s.NMLPs, NSamplesA: a.Info.NSamples, NSamplesB: b.Info.NSamples})
		res.Neurons += s.NMLPs * int64(a.Splits[i].Width*a.Splits[i].Depth)
		res.Layers += s.NMLPs * int64(a.Splits[i].Depth)
	}
	if res.Mode == ModeStat {
		if a.Info.NSamples <= 0 || b.Info.NSamples <= 0 {
			return nil, inputErrorf("--mode stat needs n_samples in both datasets' metadata.json (A: %d, B: %d)", a.Info.NSamples, b.Info.NSamples)
		}
		res.Alpha = in.Alpha
		if res.Alpha <= 0 {
			res.Alpha = DefaultAlpha
		}
		if res.Alpha > MaxAlpha {
			return nil, inputErrorf("--alpha=%g is above %g: the layer test's bound holds for thresholds from 1.24 only", res.Alpha, MaxAlpha)
		}
		res.Threshold = Threshold(res.Alpha, res.Neurons+res.Layers)
	}
	if err := c.stream(a, b); err != nil {
		return nil, err
	}
	res.Same = true
	for _, s := range res.Splits {
		if s.DifferentMLPs > 0 {
			res.Same = false
		}
	}
	return res, nil
}

// Threshold is the |z| beyond which one of n neurons counts as different
// for an overall false-alarm rate alpha: the two-sided normal quantile at
// alpha/n (Bonferroni), so that n independent standard normals exceed it
// with probability at most alpha.
func Threshold(alpha float64, n int64) float64 {
	if n < 1 {
		n = 1
	}
	return math.Sqrt2 * math.Erfcinv(alpha/float64(n))
}

func open(side, dir string) (*dataset.Dir, error) {
	d, err := dataset.Open(dir, false)
	if err != nil {
		return nil, &InputError{Msg: fmt.Sprintf("%s: %v", side, err)}
	}
	return d, nil
}

// pair checks that a and b hold the same splits of the same shapes and
// sizes, and orders b's splits as a's.
func pair(a, b *dataset.Dir, pa, pb string) error {
	names := func(d *dataset.Dir) []string {
		var out []string
		for _, s := range d.Splits {
			out = append(out, s.Name)
		}
		return out
	}
	na, nb := names(a), names(b)
	sa, sb := slices.Sorted(slices.Values(na)), slices.Sorted(slices.Values(nb))
	if !slices.Equal(sa, sb) {
		return inputErrorf("%s has splits %q, %s has %q: compare needs the same splits", pa, sa, pb, sb)
	}
	order := make([]int, len(na))
	for i, n := range na {
		order[i] = slices.Index(nb, n)
	}
	splits, infos := slices.Clone(b.Splits), slices.Clone(b.Info.Splits)
	for i, j := range order {
		b.Splits[i], b.Info.Splits[i] = splits[j], infos[j]
	}
	for i := range a.Splits {
		x, y := &a.Splits[i], &b.Splits[i]
		if x.Width != y.Width || x.Depth != y.Depth {
			return inputErrorf("split %s: %s has width=%d depth=%d, %s has width=%d depth=%d: MLPs of different shapes cannot be compared",
				x.Name, pa, x.Width, x.Depth, pb, y.Width, y.Depth)
		}
		if n, m := a.Info.Splits[i].NMLPs, b.Info.Splits[i].NMLPs; n != m {
			return inputErrorf("split %s: %s has %d MLPs, %s has %d: compare needs the same MLPs (the same seed file)", x.Name, pa, n, pb, m)
		}
	}
	return nil
}

// chooseMode returns the mode asked for, or picks one, with the reason.
func chooseMode(a, b *dataset.Dir, asked Mode) (Mode, string) {
	var why string
	for i := range a.Info.Splits {
		pa, pb := a.Info.Splits[i].Provenance, b.Info.Splits[i].Provenance
		ka, kb := sampler(pa), sampler(pb)
		switch {
		case ka != kb:
			why = fmt.Sprintf("split %s was baked with sampler %s in A and %s in B", a.Info.Splits[i].Name, ka, kb)
		case pa.AlgorithmVersion != pb.AlgorithmVersion:
			why = fmt.Sprintf("split %s was baked with algorithm %q in A and %q in B", a.Info.Splits[i].Name, pa.AlgorithmVersion, pb.AlgorithmVersion)
		}
		if why != "" {
			break
		}
	}
	if why == "" && a.Info.NSamples != b.Info.NSamples {
		why = fmt.Sprintf("n_samples is %d in A and %d in B", a.Info.NSamples, b.Info.NSamples)
	}
	switch {
	case asked != "":
		return asked, "asked for (--mode)"
	case why != "":
		return ModeStat, why
	}
	return ModeExact, "the same sampler, algorithm and n_samples"
}

// sampler names what computed a split's statistics: whestbake's sampler,
// or whestbench's backend (its files record no sampler).
func sampler(p dataset.Provenance) string {
	if p.Sampler != "" {
		return p.Sampler
	}
	if p.Backend != "" {
		return "backend " + p.Backend
	}
	return "(unrecorded)"
}

var errStop = errors.New("stop")

// rows is d's rows as a pull iterator over Scan, which checks them as it
// goes; the row is valid until the next call. err reports Scan's error once
// next has said there is no more.
type rows struct {
	next func() (*dataset.SplitData, dataset.Row, bool)
	stop func()
	err  error
}

func pull(d *dataset.Dir) *rows {
	r := &rows{}
	r.next, r.stop = iter.Pull2(func(yield func(*dataset.SplitData, dataset.Row) bool) {
		err := d.Scan(func(s *dataset.SplitData, row dataset.Row) error {
			if !yield(s, row) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			r.err = err
		}
	})
	return r
}

type comparer struct {
	res   *Result
	shown int
}

func (c *comparer) stream(a, b *dataset.Dir) error {
	ra, rb := pull(a), pull(b)
	defer ra.stop()
	defer rb.stop()
	split := -1
	var cur *dataset.SplitData
	for {
		sa, x, okA := ra.next()
		sb, y, okB := rb.next()
		if ra.err != nil {
			return &InputError{Msg: fmt.Sprintf("A: %v", ra.err)}
		}
		if rb.err != nil {
			return &InputError{Msg: fmt.Sprintf("B: %v", rb.err)}
		}
		if !okA || !okB {
			if okA != okB {
				return inputErrorf("A and B hold different numbers of rows")
			}
			return nil
		}
		if sa != cur {
			cur = sa
			split++
		}
		if sa.Name != sb.Name {
			return inputErrorf("row order: A is in split %s where B is in %s", sa.Name, sb.Name)
		}
		if x.Seed != y.Seed {
			return inputErrorf("split %s, mlp_id %d: mlp_seed %d in A, %d in B: compare needs the same MLPs (the same seed file, in the same order)",
				sa.Name, x.MLPID, x.Seed, y.Seed)
		}
		c.row(&c.res.Splits[split], sa.Width, sa.Depth, &x, &y)
	}
}

// row compares one MLP of both datasets.
func (c *comparer) row(s *SplitResult, w, d int, x, y *dataset.Row) {
	differs := false
	note := func(field string, i int, a, b string) {
		differs = true
		if len(c.res.Differences) < c.shown {
			c.res.Differences = append(c.res.Differences, Difference{Split: s.Name, MLPID: x.MLPID, Seed: x.Seed, Field: field, Index: i, A: a, B: b})
		}
	}
	if x.Name != y.Name {
		note("mlp_name", -1, x.Name, y.Name)
	}
	if i := firstBitDifference(x.Weights, y.Weights); i >= 0 {
		note("weights", i, f32(x.Weights[i]), f32(y.Weights[i]))
	}
	if c.res.Mode == ModeExact {
		if i := firstBitDifference(x.LayerMeans, y.LayerMeans); i >= 0 {
			note("all_layer_means", i, f32(x.LayerMeans[i]), f32(y.LayerMeans[i]))
		}
		if i := firstBitDifference(x.FinalMeans, y.FinalMeans); i >= 0 {
			note("final_means", i, f32(x.FinalMeans[i]), f32(y.FinalMeans[i]))
		}
		if !varianceClose(x.AvgVariance, y.AvgVariance) {
			note("avg_variance", -1, f64(x.AvgVariance), f64(y.AvgVariance))
		}
	} else {
		st := zScores(x, y, w, d, s.NSamplesA, s.NSamplesB, c.res.Threshold)
		s.MLPStats = append(s.MLPStats, st)
		if st.Beyond > 0 || st.LayersBeyond > 0 {
			differs = true
		}
		if st.Beyond > 0 && len(c.res.Differences) < c.shown {
			i := st.Layer*w + st.Neuron
			c.res.Differences = append(c.res.Differences, Difference{Split: s.Name, MLPID: x.MLPID, Seed: x.Seed,
				Field: fmt.Sprintf("all_layer_means (|z|=%.1f)", st.MaxZ), Index: i, A: f32(x.LayerMeans[i]), B: f32(y.LayerMeans[i])})
		} else if st.LayersBeyond > 0 && len(c.res.Differences) < c.shown {
			c.res.Differences = append(c.res.Differences, Difference{Split: s.Name, MLPID: x.MLPID, Seed: x.Seed,
				Field: fmt.Sprintf("all_layer_means layer %d (‖z‖=%.1f over %d neurons)", st.NormLayer, st.LayerNorm, w), Index: -1})
		}
	}
	if differs {
		s.DifferentMLPs++
	}
}

// zScores compares the neuron means of one MLP of two datasets of nA and
// nB samples: z = Δmean / se with se² = σ̂²(1/nA + 1/nB) plus the float32
// rounding of both stored means (an ULP each, an upper bound).
//
// σ̂ is one number for every neuron of the MLP: σ̂² = max(W·v, π·E), v the
// larger avg_variance of the two datasets and E the largest Σ_j m_lj² over
// the layers l of both. v is the mean variance of the final layer's
// neurons, so W·v is that layer's total variance, which bounds each of its
// neurons' (variances are non-negative). π·Σ_j m_lj² is layer l's total
// second moment when its pre-activations are zero-mean normals (then
// E[relu(a)²] = π·E[relu(a)]², exactly so in the first layer), and a
// neuron's variance is at most its second moment, which is at most its
// layer's. He-initialised weights (whestbench's sqrt(2/W)) keep the total
// second moment from layer to layer in expectation, which is why the
// largest of these totals stands for the hidden layers, whose variances no
// dataset holds. Bounding a neuron's variance by a whole layer's is what
// makes σ̂ conservative, by about √W for a layer of neurons alike: z is
// smaller than the textbook one and the stated false-alarm rate an upper
// bound, at the price of power (a shift is caught from about
// Threshold·σ̂·sqrt(1/nA+1/nB)).
//
// The same bound makes a second test as safe and √W times as sensitive to a
// whole layer gone wrong: ‖z_l‖² = Σ_j z_lj². σ̂² bounds the layer's total
// variance, so under the null z_l is a normal vector whose covariance has
// trace at most 1, and ‖z_l‖² a sum λ_1·Y_1² + … of independent χ²_1 with
// Σλ ≤ 1, which exceeds any t ≥ 1.5365 no more often than one χ²_1 does
// (Székely and Bakirov, "Extremal probabilities for Gaussian quadratic
// forms", Probab. Theory Relat. Fields 126, 184–202, 2003). A layer is then judged
// with the same threshold as a neuron, and the Bonferroni count covers both.
// Narrow deep MLPs are where the bound is
// tightest (W=4, D=8: largest |z| 1.16 over 256 neurons, where normals
// would reach about 3; TestCompareStatistical).
func zScores(x, y *dataset.Row, w, d int, nA, nB int64, threshold float64) MLPStat {
	st := MLPStat{MLPID: x.MLPID, Seed: x.Seed}
	v := max(x.AvgVariance, y.AvgVariance)
	if math.IsNaN(v) || v < 0 {
		v = 0
	}
	var energy float64
	for l := range d {
		for _, r := range []*dataset.Row{x, y} {
			var e float64
			for _, m := range r.LayerMeans[l*w : (l+1)*w] {
				e += float64(m) * float64(m)
			}
			energy = max(energy, e)
		}
	}
	sigma2 := max(float64(w)*v, math.Pi*energy)
	st.Sigma = math.Sqrt(sigma2)
	inv := 1/float64(nA) + 1/float64(nB)
	var sumSq float64 // Σ z² of the current layer
	for i := range x.LayerMeans {
		a, b := x.LayerMeans[i], y.LayerMeans[i]
		ua, ub := ulp32(a), ulp32(b)
		se := math.Sqrt(sigma2*inv + ua*ua + ub*ub)
		delta := math.Abs(float64(a) - float64(b))
		var z float64
		switch {
		case delta == 0:
		case se == 0 || math.IsNaN(delta):
			z = math.Inf(1)
		default:
			z = delta / se
		}
		if z > threshold {
			st.Beyond++
		}
		if z > st.MaxZ || i == 0 {
			st.MaxZ, st.Layer, st.Neuron = z, i/w, i%w
		}
		sumSq += z * z
		if i%w == w-1 {
			norm := math.Sqrt(sumSq)
			if norm > threshold {
				st.LayersBeyond++
			}
			if norm > st.LayerNorm || i == w-1 {
				st.LayerNorm, st.NormLayer = norm, i/w
			}
			sumSq = 0
		}
	}
	return st
}

// ulp32 is the spacing of float32 values at x.
func ulp32(x float32) float64 {
	a := math.Abs(float64(x))
	if math.IsInf(a, 0) || math.IsNaN(a) {
		return 0
	}
	next := math.Nextafter32(float32(a), float32(math.Inf(1)))
	return float64(next) - a
}

// varianceClose is numpy.isclose(a, b, rtol=1e-12, atol=1e-15) (so NaN is
// close to nothing), or the same bits.
func varianceClose(a, b float64) bool {
	if math.Float64bits(a) == math.Float64bits(b) {
		return true
	}
	return math.Abs(a-b) <= varianceATol+varianceRTol*math.Abs(b)
}

// firstBitDifference is the first index where a and b differ in bits, or -1.
func firstBitDifference(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func f32(x float32) string { return fmt.Sprintf("%v (0x%08x)", x, math.Float32bits(x)) }
func f64(x float64) string { return fmt.Sprintf("%v", x) }
