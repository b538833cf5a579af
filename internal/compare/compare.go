// Package compare decides whether two datasets hold the same ground truth.
// It is `whestbake dataset compare`, the check whestbench's docs ask a user
// to write by hand in numpy after a parallel, GPU or other-backend bake.
// It goes split by split and MLP by MLP, the same mlp_seed in the same
// place, either bit for bit with ModeExact or within Monte Carlo error with
// ModeStat.
//
// Both datasets are streamed side by side, one row of each in memory, and
// each one's prepared Arrow tree, which whestbench's loader reads before
// the parquet files, is checked against its rows in the same pass by
// dataset.Dir.ScanPrepared, as inspect checks it: the rows compared are
// what a loader reads, whichever files it takes them from.
package compare

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
)

// Mode is how two datasets are compared.
type Mode string

const (
	// ModeExact: names, weights and means bit-identical, avg_variance
	// within numpy's isclose(rtol=1e-12, atol=1e-15), the tolerance
	// whestbench's docs give for it: sum_sq/n − mean² loses about an ULP.
	ModeExact Mode = "exact"
	// ModeStat: names and weights bit-identical, as they do not depend on
	// the sampler; each neuron's mean in all_layer_means and final_means,
	// and avg_variance, within Monte Carlo error, as zScores and varianceZ
	// define it.
	ModeStat Mode = "stat"
	// ModeTF32x3: a tf32x3 bake against an fp32 one of the same MLPs and samples, or
	// against a tf32x3 bake on other tensor cores, as docs/GPU.md, "Precision tf32x3", says:
	// names and weights bit-identical, each mean within bakeapi.TF32x3MeanTolerance of
	// its layer's largest |mean|, avg_variance within TF32x3VarianceTolerance of its
	// size; twice those between two tf32x3 bakes, each that far from fp32.
	ModeTF32x3 Mode = "tf32x3"
)

// The avg_variance tolerance of ModeExact, in numpy.isclose's form made
// symmetric, and ModeStat's allowance for its rounding.
const (
	varianceRTol = 1e-12
	varianceATol = 1e-15
)

// VarianceSpread is ModeStat's bound on avg_variance's Monte Carlo spread,
// relative to avg_variance, per 1/√n_samples: sd(v̂)·√n ≤ VarianceSpread·v,
// as varianceZ derives. The largest measured is 34, in docs/WHESTBENCH.md;
// it is about three times that.
const VarianceSpread = 100

// DefaultAlpha is ModeStat's overall false-alarm rate: the chance that two
// correct bakes of the same MLPs are called different. MaxAlpha is the
// largest accepted: it keeps the threshold at 1.96 or more, since at least
// one neuron and one layer are tested, within the layer test's bound, which
// holds from 1.24 as zScores shows.
const (
	DefaultAlpha = 1e-3
	MaxAlpha     = 0.1
)

// Input names the two datasets and how to compare them.
type Input struct {
	A, B string // dataset directories
	// Mode is "" to choose: ModeExact when every split of both datasets
	// was baked with the same sampler, whestbench's backend, the same
	// algorithm version, for tf32x3 on tensor cores that give the same
	// bits, and the same n_samples; ModeTF32x3 when they differ only in the
	// precision or the tensor cores; ModeStat otherwise.
	Mode Mode
	// Alpha is ModeStat's overall false-alarm rate; 0 means DefaultAlpha.
	Alpha float64
	// Shown bounds the differences ModeExact records, the first ones;
	// 0 means 10.
	Shown int
}

// Result is the comparison. Same is the verdict: identical for ModeExact,
// statistically equivalent for ModeStat.
type Result struct {
	A          string        `json:"a"`
	B          string        `json:"b"`
	Mode       Mode          `json:"mode"`
	ModeReason string        `json:"mode_reason"`
	Same       bool          `json:"same"`
	Splits     []SplitResult `json:"splits"`
	// Differences are the first differences found, in row order: any
	// value with ModeExact, names and weights in every mode.
	Differences []Difference `json:"differences"`
	// ModeStat: the overall false-alarm rate asked for; the number of
	// neuron means compared in all_layer_means and final_means, of layers,
	// where final_means counts as one, and of avg_variance values; and the
	// |z| or ‖z_l‖ beyond which a mean, a layer or an avg_variance counts as
	// different: Bonferroni over all of those tests.
	Alpha     float64 `json:"alpha,omitempty"`
	Neurons   int64   `json:"neurons,omitempty"`
	Layers    int64   `json:"layers,omitempty"`
	Variances int64   `json:"avg_variances,omitempty"`
	Threshold float64 `json:"z_threshold,omitempty"`
	// ModeTF32x3: the mean and avg_variance tolerances, relative, as ModeTF32x3 says.
	MeanTolerance     float64 `json:"mean_tolerance,omitempty"`
	VarianceTolerance float64 `json:"variance_tolerance,omitempty"`
}

// SplitResult is one split's comparison.
type SplitResult struct {
	Name  string `json:"name"`
	MLPs  int64  `json:"n_mlps"`
	Width int    `json:"width"`
	Depth int    `json:"depth"`
	// DifferentMLPs counts the MLPs with any difference under ModeExact.
	// Under ModeStat it counts those with a mean, a layer or avg_variance
	// beyond the threshold, or other weights or names.
	DifferentMLPs int64 `json:"different_mlps"`
	// NSamplesA and NSamplesB are the datasets' sample counts.
	NSamplesA int64 `json:"n_samples_a"`
	NSamplesB int64 `json:"n_samples_b"`
	// MLPStats is ModeStat's per-MLP table, in row order.
	MLPStats []MLPStat `json:"mlps,omitempty"`
	// PreparedA and PreparedB say whether A's and B's prepared Arrow
	// folder of the split, which whestbench's loader reads before the
	// parquet files, was read equal to its parquet rows; false when the
	// dataset has none.
	PreparedA bool `json:"prepared_a"`
	PreparedB bool `json:"prepared_b"`
	// tf32 is ModeTF32x3's tolerance factor: 1 against fp32, 2 between two tf32x3
	// bakes.
	tf32 float64
}

// MLPStat is one MLP's statistical comparison. A layer index equal to the
// split's depth stands for final_means.
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
	// exceeds the threshold, as zScores defines it.
	LayerNorm    float64 `json:"max_layer_norm"`
	NormLayer    int     `json:"norm_layer"`
	LayersBeyond int     `json:"layers_beyond"`
	// Sigma is zScores' per-neuron standard deviation bound.
	Sigma float64 `json:"sigma"`
	// VarianceZ is avg_variance's |z|, from varianceZ.
	VarianceZ float64 `json:"avg_variance_z"`
}

// Difference is one value that differs.
type Difference struct {
	Split string `json:"split"`
	MLPID int32  `json:"mlp_id"`
	Seed  int64  `json:"mlp_seed"`
	Field string `json:"field"`
	// Index is the flat index into the field's array, -1 for a scalar.
	Index int    `json:"index"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// InputError is a pair of datasets that cannot be compared: different
// splits, shapes, MLP counts or seeds, an unreadable dataset, or one whose
// prepared tree does not read as its rows. The CLI exits 2 on it.
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
		w, d := a.Splits[i].Width, a.Splits[i].Depth
		res.Splits = append(res.Splits, SplitResult{
			Name:      s.Name,
			MLPs:      s.NMLPs,
			Width:     w,
			Depth:     d,
			NSamplesA: a.Info.NSamples,
			NSamplesB: b.Info.NSamples,
			PreparedA: prepared(a, s.Name),
			PreparedB: prepared(b, s.Name),
		})
		// all_layer_means' D layers and final_means, and avg_variance.
		res.Neurons += s.NMLPs * int64(w*(d+1))
		res.Layers += s.NMLPs * int64(d+1)
		res.Variances += s.NMLPs
	}
	if res.Mode == ModeStat {
		if a.Info.NSamples <= 0 || b.Info.NSamples <= 0 {
			return nil, inputErrorf("--mode stat needs n_samples in both datasets' "+
				"metadata.json (A: %d, B: %d)", a.Info.NSamples, b.Info.NSamples)
		}
		res.Alpha = in.Alpha
		if res.Alpha <= 0 {
			res.Alpha = DefaultAlpha
		}
		if res.Alpha > MaxAlpha {
			return nil, inputErrorf("--alpha=%g is above %g: the layer test's bound holds "+
				"for thresholds from 1.24 only", res.Alpha, MaxAlpha)
		}
		res.Threshold = Threshold(res.Alpha, res.Neurons+res.Layers+res.Variances)
	}
	if res.Mode == ModeTF32x3 {
		res.MeanTolerance = bakeapi.TF32x3MeanTolerance
		res.VarianceTolerance = bakeapi.TF32x3VarianceTolerance
		for i := range res.Splits {
			res.Splits[i].tf32 = 1
			if isTF32x3(a.Info.Splits[i].Provenance) && isTF32x3(b.Info.Splits[i].Provenance) {
				res.Splits[i].tf32 = 2
			}
		}
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
// alpha/n, Bonferroni's, so that n independent standard normals exceed it
// with probability at most alpha.
func Threshold(alpha float64, n int64) float64 {
	if n < 1 {
		n = 1
	}
	return math.Sqrt2 * math.Erfcinv(alpha/float64(n))
}

// prepared reports whether d's metadata lists a prepared folder of split,
// which ScanPrepared checks.
func prepared(d *dataset.Dir, split string) bool {
	block, _ := d.Meta.GetObject("prepared_splits")
	return block.Has(split)
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
		return inputErrorf("%s has splits %q, %s has %q: compare needs the same splits",
			pa, sa, pb, sb)
	}
	order := make([]int, len(na))
	for i, n := range na {
		order[i] = slices.Index(nb, n)
	}
	splits, infos := slices.Clone(b.Splits), slices.Clone(b.Info.Splits)
	for i, j := range order {
		b.Splits[i] = splits[j]
		b.Info.Splits[i] = infos[j]
	}
	for i := range a.Splits {
		x, y := &a.Splits[i], &b.Splits[i]
		if x.Width != y.Width || x.Depth != y.Depth {
			return inputErrorf("split %s: %s has width=%d depth=%d, %s has width=%d depth=%d: "+
				"MLPs of different shapes cannot be compared",
				x.Name, pa, x.Width, x.Depth, pb, y.Width, y.Depth)
		}
		if n, m := a.Info.Splits[i].NMLPs, b.Info.Splits[i].NMLPs; n != m {
			return inputErrorf("split %s: %s has %d MLPs, %s has %d: "+
				"compare needs the same MLPs (the same seed file)", x.Name, pa, n, pb, m)
		}
	}
	return nil
}

// chooseMode returns the mode asked for, or picks one, with the reason: ModeStat for a
// difference in sampler, algorithm or n_samples, else ModeTF32x3 for a difference in
// precision or tensor cores alone, else ModeExact.
func chooseMode(a, b *dataset.Dir, asked Mode) (Mode, string) {
	var stat, tf32 string
	for i := range a.Info.Splits {
		name := a.Info.Splits[i].Name
		pa, pb := a.Info.Splits[i].Provenance, b.Info.Splits[i].Provenance
		ka, kb := sampler(pa, a.Info.Provenance), sampler(pb, b.Info.Provenance)
		switch {
		case ka != kb:
			stat = fmt.Sprintf("split %s was baked with sampler %s in A and %s in B", name, ka, kb)
		case tensorCoresApart(pa, pb):
			tf32 = fmt.Sprintf("split %s was baked with algorithm %q (%s) in A and %q (%s) in B",
				name, pa.AlgorithmVersion, pa.Engine, pb.AlgorithmVersion, pb.Engine)
		case pa.AlgorithmVersion != pb.AlgorithmVersion:
			stat = fmt.Sprintf("split %s was baked with algorithm %q in A and %q in B",
				name, pa.AlgorithmVersion, pb.AlgorithmVersion)
		}
		if stat != "" {
			break
		}
	}
	if stat == "" && a.Info.NSamples != b.Info.NSamples {
		stat = fmt.Sprintf("n_samples is %d in A and %d in B", a.Info.NSamples, b.Info.NSamples)
	}
	switch {
	case asked != "":
		return asked, "asked for (--mode)"
	case stat != "":
		return ModeStat, stat
	case tf32 != "":
		return ModeTF32x3, tf32
	}
	return ModeExact, "the same sampler, algorithm and n_samples"
}

// isTF32x3 reports whether p is a tf32x3 bake.
func isTF32x3(p dataset.Provenance) bool {
	return p.AlgorithmVersion == bakeapi.PhiloxTF32x3Algorithm
}

// tensorCoresApart reports whether two philox bakes differ in precision, or are tf32x3
// bakes whose tensor cores give other bits.
func tensorCoresApart(pa, pb dataset.Provenance) bool {
	philox := func(p dataset.Provenance) bool {
		return p.AlgorithmVersion == bakeapi.PhiloxAlgorithm || isTF32x3(p)
	}
	if !philox(pa) || !philox(pb) || !isTF32x3(pa) && !isTF32x3(pb) {
		return false
	}
	ta, okA := bakeapi.ParseTensorCores(pa.Engine)
	tb, okB := bakeapi.ParseTensorCores(pb.Engine)
	return !isTF32x3(pa) || !isTF32x3(pb) || !okA || !okB || !ta.SameBits(tb)
}

// sampler names what computed a split's statistics: whestbake's sampler,
// or whestbench's backend, as its files record no sampler. It reads the
// split's provenance p or else the dataset's top level: whestbench's
// combine_split_datasets in dataset_io.py keeps the inputs' common backend
// there and no provenance in the splits entries.
func sampler(p, top dataset.Provenance) string {
	if s := cmp.Or(p.Sampler, top.Sampler); s != "" {
		return s
	}
	if b := cmp.Or(p.Backend, top.Backend); b != "" {
		return "backend " + b
	}
	return "(unrecorded)"
}

var errStop = errors.New("stop")

// rows is d's rows as a pull iterator over ScanPrepared, which checks them
// and d's prepared tree against them as it goes; the row is valid until the
// next call. err reports ScanPrepared's error once next has said there is
// no more.
type rows struct {
	next func() (*dataset.SplitData, dataset.Row, bool)
	stop func()
	err  error
}

func pull(d *dataset.Dir) *rows {
	r := &rows{}
	r.next, r.stop = iter.Pull2(func(yield func(*dataset.SplitData, dataset.Row) bool) {
		err := d.ScanPrepared(func(s *dataset.SplitData, row dataset.Row) error {
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
			return inputErrorf("split %s, mlp_id %d: mlp_seed %d in A, %d in B: "+
				"compare needs the same MLPs (the same seed file, in the same order)",
				sa.Name, x.MLPID, x.Seed, y.Seed)
		}
		c.row(&c.res.Splits[split], sa.Width, sa.Depth, &x, &y)
	}
}

// row compares one MLP of both datasets: every column bit for bit but
// those the mode compares by a rule of its own, see bitForBit, then the
// mode's statistics.
func (c *comparer) row(s *SplitResult, w, d int, x, y *dataset.Row) {
	differs := false
	note := func(field string, i int, a, b string) {
		differs = true
		if len(c.res.Differences) < c.shown {
			c.res.Differences = append(c.res.Differences, Difference{
				Split: s.Name,
				MLPID: x.MLPID,
				Seed:  x.Seed,
				Field: field,
				Index: i,
				A:     a,
				B:     b,
			})
		}
	}
	for i, col := range dataset.Columns {
		if !c.bitForBit(i) {
			continue
		}
		if at, a, b, ok := firstDifference(&col, x, y); ok {
			note(col.Name, at, a, b)
		}
	}
	switch c.res.Mode {
	case ModeExact:
		if !varianceClose(x.AvgVariance, y.AvgVariance) {
			note(columnName(dataset.ColAvgVariance), -1, f64(x.AvgVariance), f64(y.AvgVariance))
		}
	case ModeTF32x3:
		c.tf32Row(note, s, w, d, x, y)
	default:
		c.statistics(s, w, d, x, y, note)
	}
	if differs {
		s.DifferentMLPs++
	}
}

// meanField is the field and flat index of layer l's means: all_layer_means, or
// final_means for l = d.
func meanField(l, w, d int) (string, int) {
	if l == d {
		return columnName(dataset.ColFinalMeans), 0
	}
	return columnName(dataset.ColLayerMeans), l * w
}

// tf32Row notes the first mean of each layer, and avg_variance, of one MLP beyond
// ModeTF32x3's tolerances scaled by s.tf32: a mean's is relative to the largest |mean|
// of its layer on either side, avg_variance's to the larger.
func (c *comparer) tf32Row(
	note func(field string, i int, a, b string),
	s *SplitResult,
	w, d int,
	x, y *dataset.Row,
) {
	for l := range d + 1 {
		ma, mb := means(x, w, d, l), means(y, w, d, l)
		scale := 0.0
		for j := range ma {
			scale = max(scale, math.Abs(float64(ma[j])), math.Abs(float64(mb[j])))
		}
		tol := s.tf32 * c.res.MeanTolerance * scale
		for j := range ma {
			if !(math.Abs(float64(ma[j])-float64(mb[j])) <= tol) {
				name, at := meanField(l, w, d)
				note(fmt.Sprintf("%s (|Δ| beyond %.3g)", name, tol), at+j, f32(ma[j]), f32(mb[j]))
				break
			}
		}
	}
	vtol := s.tf32 * c.res.VarianceTolerance * max(math.Abs(x.AvgVariance), math.Abs(y.AvgVariance))
	if !(math.Abs(x.AvgVariance-y.AvgVariance) <= vtol) {
		note(fmt.Sprintf("%s (|Δ| beyond %.3g)", columnName(dataset.ColAvgVariance), vtol), -1,
			f64(x.AvgVariance), f64(y.AvgVariance))
	}
}

// bitForBit says whether column i must hold the same bits on both sides.
// mlp_id and mlp_seed place the row, which run checks before; the
// breakdown records how a bake was timed and chunked, not the MLP;
// avg_variance is compared within its tolerance, and in ModeStat the
// means within Monte Carlo error.
func (c *comparer) bitForBit(i int) bool {
	switch i {
	case dataset.ColMLPID, dataset.ColSeed, dataset.ColBreakdown, dataset.ColAvgVariance:
		return false
	case dataset.ColLayerMeans, dataset.ColFinalMeans:
		return c.res.Mode == ModeExact
	}
	return true
}

// statistics compares the means and avg_variance of one MLP within Monte
// Carlo error for ModeStat, noting what lies beyond the threshold.
func (c *comparer) statistics(
	s *SplitResult,
	w, d int,
	x, y *dataset.Row,
	note func(field string, i int, a, b string),
) {
	st := zScores(x, y, w, d, s.NSamplesA, s.NSamplesB, c.res.Threshold)
	st.VarianceZ = varianceZ(x.AvgVariance, y.AvgVariance, s.NSamplesA, s.NSamplesB)
	s.MLPStats = append(s.MLPStats, st)
	if st.Beyond > 0 {
		name, at := meanField(st.Layer, w, d)
		a, b := means(x, w, d, st.Layer), means(y, w, d, st.Layer)
		note(fmt.Sprintf("%s (|z|=%.1f)", name, st.MaxZ), at+st.Neuron,
			f32(a[st.Neuron]), f32(b[st.Neuron]))
	} else if st.LayersBeyond > 0 {
		name, _ := meanField(st.NormLayer, w, d)
		if st.NormLayer < d {
			name = fmt.Sprintf("%s layer %d", name, st.NormLayer)
		}
		label := fmt.Sprintf("%s (‖z‖=%.1f over %d neurons)", name, st.LayerNorm, w)
		note(label, -1, "", "")
	}
	if st.VarianceZ > c.res.Threshold {
		note(fmt.Sprintf("%s (|z|=%.1f)", columnName(dataset.ColAvgVariance), st.VarianceZ), -1,
			f64(x.AvgVariance), f64(y.AvgVariance))
	}
}

// columnName is column i's name.
func columnName(i int) string { return dataset.Columns[i].Name }

// firstDifference is where column col of x and y first differs in bits:
// the flat index into an array, -1 for a scalar, and both values as text,
// or false when they are the same.
func firstDifference(col *dataset.Column, x, y *dataset.Row) (int, string, string, bool) {
	switch a := col.Of(x).(type) {
	case *[]float32:
		b := col.Floats(y)
		if i := firstBitDifference(*a, b); i >= 0 {
			return i, f32((*a)[i]), f32(b[i]), true
		}
	case *float64:
		if b := *col.Of(y).(*float64); math.Float64bits(*a) != math.Float64bits(b) {
			return -1, f64(*a), f64(b), true
		}
	case *string:
		if b := *col.Of(y).(*string); *a != b {
			return -1, *a, b, true
		}
	case *int32:
		if b := *col.Of(y).(*int32); *a != b {
			return -1, fmt.Sprint(*a), fmt.Sprint(b), true
		}
	case *int64:
		if b := *col.Of(y).(*int64); *a != b {
			return -1, fmt.Sprint(*a), fmt.Sprint(b), true
		}
	}
	return 0, "", "", false
}

// zScores compares the neuron means of one MLP of two datasets of nA and
// nB samples, the D layers of all_layer_means and then final_means as layer
// D: z = Δmean / se with se² = σ̂²(1/nA + 1/nB) plus the float32 rounding
// of both stored means, an ULP each, an upper bound.
//
// σ̂ is one number for every neuron of the MLP, σ̂² = min(S_A, S_B), where
// each side's S = max(W·v, π·E), v its avg_variance and E the largest
// Σ_j m_lj² over its layers l. v is the mean variance of the final layer's
// neurons, so W·v is that layer's total variance, which bounds each of its
// neurons' since variances are non-negative. π·Σ_j m_lj² is layer l's total
// second moment when its pre-activations are zero-mean normals, for then
// E[relu(a)²] = π·E[relu(a)]², exactly so in the first layer. A neuron's
// variance is at most its second moment, which is at most its layer's.
// He-initialised weights, whestbench's sqrt(2/W), keep the total
// second moment from layer to layer in expectation, which is why the
// largest of these totals stands for the hidden layers, whose variances no
// dataset holds. Bounding a neuron's variance by a whole layer's is what
// makes σ̂ conservative, by about √W for a layer of neurons alike: z is
// smaller than the textbook one and the stated false-alarm rate an upper
// bound, at the price of power: a shift is caught from about
// Threshold·σ̂·sqrt(1/nA+1/nB).
//
// The smaller of the two sides' bounds is what keeps a dataset from
// setting its own tolerance: a side can only lower σ̂, which makes a
// difference likelier to be seen, never raise it above what the other
// side's statistics give. Two correct bakes estimate the same S, each with
// a Monte Carlo error of order 1/√n relative, which the bound's margin
// absorbs, as TestCompareStatistical checks, and min is symmetric, so compare A B
// and compare B A agree.
//
// The same bound makes a second test as safe and √W times as sensitive to a
// whole layer gone wrong: ‖z_l‖² = Σ_j z_lj². σ̂² bounds the layer's total
// variance, so under the null z_l is a normal vector whose covariance has
// trace at most 1, and ‖z_l‖² a sum λ_1·Y_1² + … of independent χ²_1 with
// Σλ ≤ 1, which exceeds any t ≥ 1.5365 no more often than one χ²_1 does:
// Székely and Bakirov, "Extremal probabilities for Gaussian quadratic
// forms", Probab. Theory Relat. Fields 126, 184–202, 2003. A layer is then
// judged with the same threshold as a neuron, and the Bonferroni count
// covers both. Narrow deep MLPs are where the bound is tightest: at W=4,
// D=8 TestCompareStatistical sees a largest |z| of 1.16 over 256 neurons,
// where normals would reach about 3.
//
// Every number here is finite: the readers refuse non-finite values and an
// avg_variance beyond dataset.MaxAvgVariance, so W·v, E and Δmean stay far
// from overflow, and se is at least the smallest float32's spacing.
func zScores(x, y *dataset.Row, w, d int, nA, nB int64, threshold float64) MLPStat {
	st := MLPStat{MLPID: x.MLPID, Seed: x.Seed}
	sigma2 := min(spreadBound(x, w, d), spreadBound(y, w, d))
	st.Sigma = math.Sqrt(sigma2)
	inv := 1/float64(nA) + 1/float64(nB)
	first := true
	for l := range d + 1 {
		ma, mb := means(x, w, d, l), means(y, w, d, l)
		var sumSq float64 // Σ z² of the layer
		for j := range w {
			a, b := ma[j], mb[j]
			ua, ub := ulp32(a), ulp32(b)
			se := math.Sqrt(sigma2*inv + ua*ua + ub*ub)
			z := math.Abs(float64(a)-float64(b)) / se
			if z > threshold {
				st.Beyond++
			}
			if z > st.MaxZ || first {
				st.MaxZ = z
				st.Layer = l
				st.Neuron = j
				first = false
			}
			sumSq += z * z
		}
		norm := math.Sqrt(sumSq)
		if norm > threshold {
			st.LayersBeyond++
		}
		if norm > st.LayerNorm || l == 0 {
			st.LayerNorm = norm
			st.NormLayer = l
		}
	}
	return st
}

// spreadBound is one side's S = max(W·v, π·E) of zScores. A negative v,
// the rounding of a variance near 0, counts as 0.
func spreadBound(r *dataset.Row, w, d int) float64 {
	var energy float64
	for l := range d {
		var e float64
		for _, m := range r.LayerMeans[l*w : (l+1)*w] {
			e += float64(m) * float64(m)
		}
		energy = max(energy, e)
	}
	return max(float64(w)*max(r.AvgVariance, 0), math.Pi*energy)
}

// means is layer l of r's all_layer_means, or its final_means for l = d.
func means(r *dataset.Row, w, d, l int) []float32 {
	if l == d {
		return r.FinalMeans
	}
	return r.LayerMeans[l*w : (l+1)*w]
}

// varianceZ compares the avg_variance values a and b of one MLP of two
// datasets of nA and nB samples: |z| = |a − b| / se with
//
//	se² = (VarianceSpread · max(0, min(a, b)))² · (1/nA + 1/nB) + r_a² + r_b²,
//
// r = 1e-15 + 1e-12·|v| the float64 rounding of each, exact mode's
// tolerance. v̂ = Σ_j s_j² / W averages the W final neurons' sample
// variances. To first order each s_j² has Var = (μ4_j − σ_j⁴)/n, μ4 the
// fourth central moment. By Minkowski the standard deviation of a mean is
// at most the mean of the standard deviations, however the neurons are
// correlated, so sd(v̂)·√n ≤ ρ·v with ρ = Σ_j sqrt(μ4_j − σ_j⁴) / Σ_j σ_j².
// ρ is no constant: it is 2.10 for a zero-mean normal pre-activation, √2
// for a neuron that is always active, and grows without bound for one that
// rarely fires, as in a narrow deep MLP's final layer. Measured on
// whestbench's MLPs, ρ stays under 6 for W ≥ 8 and reached 34 at W=4, D=8,
// as docs/WHESTBENCH.md records; VarianceSpread, 100, is about three times that. The
// smaller of a and b is the reference, as σ̂ is in zScores: neither side
// can widen the tolerance, and a side that lowers it only makes a
// difference likelier to be seen.
func varianceZ(a, b float64, nA, nB int64) float64 {
	mc := VarianceSpread * max(0, min(a, b))
	ra := varianceATol + varianceRTol*math.Abs(a)
	rb := varianceATol + varianceRTol*math.Abs(b)
	se := math.Sqrt(mc*mc*(1/float64(nA)+1/float64(nB)) + ra*ra + rb*rb)
	return math.Abs(a-b) / se
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

// varianceClose is numpy.isclose(a, b, rtol=1e-12, atol=1e-15) made
// symmetric: the relative tolerance is of the larger magnitude, as in
// Python's math.isclose, so that compare A B and compare B A agree.
// numpy's, of |b| alone, lets b = ±Inf be close to anything, though the
// readers refuse infinities; for finite values the two forms differ only on pairs
// already within about 1e-12 of each other.
func varianceClose(a, b float64) bool {
	if math.Float64bits(a) == math.Float64bits(b) {
		return true
	}
	return math.Abs(a-b) <= varianceATol+varianceRTol*max(math.Abs(a), math.Abs(b))
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
