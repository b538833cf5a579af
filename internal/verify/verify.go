// Package verify is `whestbake dataset verify`: it recomputes the picked
// MLPs of a dataset as its rows stream by, and judges their weights,
// statistics and names against what the dataset holds.
package verify

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seeds"
)

// SplitInfo is what verification needs to know about one split, read from metadata.
type SplitInfo struct {
	Protocol string // "2.0", "3.0" or "4.0"
	RootSeed uint64 // protocol 2.0 only
	// Salt is protocol 4.0's salt. Without it, a withheld salt that was not
	// given, weights and statistics are still checked, names are not.
	Salt seeds.Salt
	// Spec is the split's bake; its Sampler is "" when the statistics' sampler
	// cannot be re-run here, as for torch bakes.
	Spec     bakeapi.Spec
	Complete bool // all n_mlps rows present, so names can be checked
	// TensorCores is what computed a tf32x3 split, its metadata's engine.
	TensorCores bakeapi.TensorCores
}

// Check is the outcome for one MLP.
type Check struct {
	MLPID      int32
	Name       string
	WeightsOK  bool
	NameOK     bool
	NameTested bool
	Stats      string // "bit-exact", "within tolerance", "MISMATCH", "skipped: ..."
	MaxAbsDiff float64
	Tolerance  float64
	OK         bool
}

// Verifier recomputes chosen rows of one split while the split's rows stream
// past it in order, so verifying holds one row at a time however large the
// split. Weights must match bit for bit. Statistics match bit for bit with
// maxSamples = 0, else from the first maxSamples samples within
// 5/√maxSamples per neuron, the Monte Carlo tolerance whestbench's tests
// use. Names, which whestbench assigns over the whole split, are compared
// by Checks, once every row has passed.
type Verifier struct {
	ctx       context.Context
	info      SplitInfo
	spec      bakeapi.Spec // info.Spec with the samples cut to maxSamples
	picks     map[int]bool // row positions to recompute
	threads   int
	pos       int     // rows seen
	names     []int64 // every row's name seed, which names derive from
	checks    []Check
	checkRows []int // row position of each check
	// stretch holds recomputed weights while they are compared with a
	// row's, a stretch at a time: a row of width 1024 × depth 16 is 64 MiB.
	stretch []float32
	weights []float32 // whole recomputed weights, only for a row whose differ
	// gpu reruns a tf32x3 split's statistics bit for bit: an engine whose tensor cores
	// give the split's bits. Without one, nil, the fp32 CPU twin judges within
	// the tf32x3 tolerance.
	gpu gpuengine.Engine
}

// weightStretch is how many weights are recomputed and compared at a time.
const weightStretch = 64 << 10

// NewVerifier verifies the rows at positions picks of a split described by
// info. Positions count from 0, in the order the rows are added.
func NewVerifier(
	ctx context.Context,
	info SplitInfo,
	picks []int,
	maxSamples int64,
	threads int,
) (*Verifier, error) {
	switch info.Protocol {
	case dataset.SeedProtocolV2Version,
		dataset.SeedProtocolV3Version,
		dataset.SeedProtocolV4Version:
	default:
		return nil, fmt.Errorf(
			"seed protocol %q cannot be verified: whestbake knows 2.0, 3.0 and 4.0",
			info.Protocol,
		)
	}
	v := &Verifier{
		ctx:     ctx,
		info:    info,
		spec:    info.Spec,
		picks:   map[int]bool{},
		threads: max(1, threads),
	}
	if maxSamples > 0 && maxSamples < v.spec.NSamples {
		v.spec.NSamples = maxSamples
	}
	if v.spec.Sampler != "" {
		if err := v.spec.Validate(); err != nil {
			return nil, err
		}
	}
	for _, i := range picks {
		v.picks[i] = true
	}
	return v, nil
}

// Add takes the split's next row and recomputes it if it was picked.
func (v *Verifier) Add(r dataset.Row) error {
	pos := v.pos
	v.pos++
	st, err := v.streams(pos, r)
	if err != nil {
		return err
	}
	v.names = append(v.names, st.NameSeed)
	if !v.picks[pos] {
		return nil
	}
	c, err := v.check(r, st)
	if err != nil {
		return err
	}
	v.checks = append(v.checks, c)
	v.checkRows = append(v.checkRows, pos)
	return nil
}

// streams rebuilds row pos's streams from its stored seed: protocols 3.0
// and 4.0 derive them from the seed itself, 4.0 keyed by the salt as
// Identities does; 2.0 from the root seed and the MLP index, and the stored
// seed must be that index's estimator seed. Protocol 4.0's data streams are
// 3.0's, so without its salt the weights and statistics are still rebuilt
// right; only the names are not, as NamesCheckable says.
func (v *Verifier) streams(pos int, r dataset.Row) (seeds.Streams, error) {
	switch v.info.Protocol {
	case dataset.SeedProtocolV3Version:
		return seeds.DeriveV3(uint64(r.Seed)), nil
	case dataset.SeedProtocolV4Version:
		return mlps.Streams(r.Seed, v.info.Salt), nil
	}
	st := seeds.DeriveV2(v.info.RootSeed, int(r.MLPID))
	if int64(st.EstimatorSeed) != r.Seed {
		return st, fmt.Errorf(
			"row %d: mlp_seed %d is not the protocol-2.0 estimator seed %d of root seed %d",
			pos,
			r.Seed,
			st.EstimatorSeed,
			v.info.RootSeed,
		)
	}
	return st, nil
}

func (v *Verifier) check(r dataset.Row, st seeds.Streams) (Check, error) {
	spec := v.spec
	c := Check{MLPID: r.MLPID, Name: r.Name}
	ws, err := seeds.NewWeightStream(spec.Width, spec.Depth, st.Weight)
	if err != nil {
		return c, err
	}
	c.WeightsOK = v.sameWeights(ws, r.Weights)
	if spec.Sampler == "" {
		c.Stats = "skipped: this dataset's sampler cannot be re-run here"
		return c, nil
	}
	// The statistics are recomputed from the right weights: the row's own
	// when they match bit for bit, else recomputed whole.
	w := r.Weights
	if !c.WeightsOK {
		v.weights, err = seeds.WeightsInto(v.weights, spec.Width, spec.Depth, st.Weight)
		if err != nil {
			return c, err
		}
		w = v.weights
	}
	// A tf32x3 split is rerun on tensor cores that give its bits, else compared with the
	// fp32 twin on the same inputs.
	eng, rerun := gpuengine.Engine(gpuengine.CPU{}), spec
	tf32 := spec.Precision == bakeapi.PrecisionTF32x3
	if tf32 && v.gpu != nil {
		eng = v.gpu
	} else if tf32 {
		rerun.Precision = bakeapi.PrecisionFP32
	}
	res, err := eng.BakeMLP(
		v.ctx,
		rerun,
		gpuengine.Job{Weights: w, Sample: st.Sample, Threads: v.threads},
		nil,
		nil,
	)
	if err != nil {
		return c, err
	}
	c.MaxAbsDiff = maxAbsDiff(res.LayerMeans, r.LayerMeans)
	switch {
	case spec.NSamples != v.info.Spec.NSamples:
		c.Tolerance = 5 / math.Sqrt(float64(spec.NSamples))
		c.Stats = "within tolerance"
		if !(c.MaxAbsDiff <= c.Tolerance) {
			c.Stats = "MISMATCH"
		}
	case tf32 && v.gpu == nil:
		tf32Check(&c, res, r, spec.Width)
	default:
		exact := sameBits32(res.LayerMeans, r.LayerMeans) &&
			sameBits32(res.FinalMeans(spec.Width), r.FinalMeans) &&
			math.Float64bits(res.AvgVariance) == math.Float64bits(r.AvgVariance)
		c.Stats = map[bool]string{true: "bit-exact", false: "MISMATCH"}[exact]
	}
	return c, nil
}

// Stats of a tf32x3 row checked against the fp32 twin on the same inputs.
const StatsTF32x3 = "within tf32x3's tolerance of fp32"

// tf32Check judges a tf32x3 row r against its fp32 recomputation want: every mean
// within bakeapi.TF32x3MeanTolerance of its layer's largest |mean|, and avg_variance
// within TF32x3VarianceTolerance of its own size. c's MaxAbsDiff and Tolerance are of
// the neuron nearest its bound.
func tf32Check(c *Check, want gpuengine.Result, r dataset.Row, w int) {
	worst := -1.0
	for l := range len(want.LayerMeans) / w {
		ref, got := want.LayerMeans[l*w:(l+1)*w], r.LayerMeans[l*w:(l+1)*w]
		scale := 0.0
		for _, m := range ref {
			scale = max(scale, math.Abs(float64(m)))
		}
		tol := bakeapi.TF32x3MeanTolerance * scale
		for j := range ref {
			d := math.Abs(float64(got[j]) - float64(ref[j]))
			ratio := d / tol
			if tol == 0 { // a layer of zero means: only zeros match it
				ratio = map[bool]float64{true: 0, false: math.Inf(1)}[d == 0]
			}
			if !(ratio <= worst) {
				worst, c.MaxAbsDiff, c.Tolerance = ratio, d, tol
			}
		}
	}
	final := sameBits32(r.FinalMeans, r.LayerMeans[len(r.LayerMeans)-w:])
	v := math.Abs(r.AvgVariance-want.AvgVariance) <=
		bakeapi.TF32x3VarianceTolerance*math.Abs(want.AvgVariance)
	c.Stats = StatsTF32x3
	if !(worst <= 1) || !final || !v {
		c.Stats = "MISMATCH"
	}
}

// Checks is the outcome for each picked row, in row order, once every row
// of the split has been added. Names are checked only when NamesCheckable:
// whestbench names over all of a split's MLPs, which a partial lacks, and
// under protocol 4.0 from the salt.
func (v *Verifier) Checks() ([]Check, error) {
	for i := range v.picks {
		if i < 0 || i >= v.pos {
			return nil, fmt.Errorf("row %d was picked but the split has %d rows", i, v.pos)
		}
	}
	var names []string
	if v.info.NamesCheckable() {
		names = mlps.Names(v.names)
	}
	out := make([]Check, len(v.checks))
	for k, c := range v.checks {
		if names != nil {
			c.NameTested = true
			c.NameOK = names[v.checkRows[k]] == c.Name
		}
		c.OK = c.WeightsOK && (!c.NameTested || c.NameOK) && c.Stats != "MISMATCH"
		out[k] = c
	}
	return out, nil
}

// NamesCheckable reports whether a Verifier can check names: they are
// assigned over the whole split, and under protocol 4.0 derived from the salt.
func (info SplitInfo) NamesCheckable() bool {
	return info.Complete && (info.Protocol != dataset.SeedProtocolV4Version || !info.Salt.IsZero())
}

// sameWeights reports whether got holds exactly the weights ws yields.
func (v *Verifier) sameWeights(ws *seeds.WeightStream, got []float32) bool {
	if len(got) != ws.Len() {
		return false
	}
	for len(got) > 0 {
		n := min(len(got), weightStretch)
		v.stretch = slices.Grow(v.stretch[:0], n)[:n]
		ws.Next(v.stretch)
		if !sameBits32(v.stretch, got[:n]) {
			return false
		}
		got = got[n:]
	}
	return true
}

func sameBits32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}
