package bake

import (
	"context"
	"fmt"
	"math"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/seeds"
)

// SplitInfo is what verification needs to know about one split, read from metadata.
type SplitInfo struct {
	Protocol string // "2.0", "3.0" or "4.0"
	RootSeed uint64 // protocol 2.0 only
	// Salt is protocol 4.0's salt. Without it (a withheld salt that was not
	// given) weights and statistics are still checked, names are not.
	Salt seeds.Salt
	// Spec is the split's bake; its Sampler is "" when the statistics' sampler
	// cannot be re-run here (torch bakes).
	Spec     bakeapi.Spec
	Complete bool // all n_mlps rows present, so names can be checked
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

// Verify recomputes rows[i] for each i in picks: weights must match bit for bit;
// statistics bit for bit with maxSamples = 0, else from the first maxSamples
// samples within 5/√maxSamples per neuron (the Monte Carlo tolerance whestbench's
// tests use).
func Verify(ctx context.Context, info SplitInfo, rows []dataset.Row, picks []int, maxSamples int64, threads int) ([]Check, error) {
	ids, err := verifyIdentities(info, rows)
	if err != nil {
		return nil, err
	}
	spec := info.Spec
	if maxSamples > 0 && maxSamples < spec.NSamples {
		spec.NSamples = maxSamples
	}
	var out []Check
	for _, i := range picks {
		if i < 0 || i >= len(rows) {
			return nil, fmt.Errorf("--mlps: row %d does not exist (the split has %d rows)", i, len(rows))
		}
		r, m := rows[i], ids[i]
		c := Check{MLPID: r.MLPID, Name: r.Name}
		w, err := seeds.Weights(spec.Width, spec.Depth, m.Streams.Weight)
		if err != nil {
			return nil, err
		}
		c.WeightsOK = sameBits32(w, r.Weights)
		if info.NamesCheckable() {
			c.NameTested, c.NameOK = true, m.Name == r.Name
		}
		switch {
		case spec.Sampler == "":
			c.Stats = "skipped: this dataset's sampler cannot be re-run here"
		default:
			if err := spec.Validate(); err != nil {
				return nil, err
			}
			res, err := gpuengine.CPU{}.BakeMLP(ctx, spec, gpuengine.Job{Weights: w, Sample: m.Streams.Sample, Threads: max(1, threads)}, nil, nil)
			if err != nil {
				return nil, err
			}
			if spec.NSamples == info.Spec.NSamples {
				exact := sameBits32(res.LayerMeans, r.LayerMeans) && sameBits32(res.FinalMeans(spec.Width), r.FinalMeans) &&
					math.Float64bits(res.AvgVariance) == math.Float64bits(r.AvgVariance)
				c.Stats = map[bool]string{true: "bit-exact", false: "MISMATCH"}[exact]
				c.MaxAbsDiff = maxAbsDiff(res.LayerMeans, r.LayerMeans)
			} else {
				c.Tolerance = 5 / math.Sqrt(float64(spec.NSamples))
				c.MaxAbsDiff = maxAbsDiff(res.LayerMeans, r.LayerMeans)
				c.Stats = "within tolerance"
				if !(c.MaxAbsDiff <= c.Tolerance) {
					c.Stats = "MISMATCH"
				}
			}
		}
		c.OK = c.WeightsOK && (!c.NameTested || c.NameOK) && c.Stats != "MISMATCH"
		out = append(out, c)
	}
	return out, nil
}

// NamesCheckable reports whether Verify can check names: they are assigned
// over the whole split, and under protocol 4.0 derived from the salt.
func (info SplitInfo) NamesCheckable() bool {
	return info.Complete && (info.Protocol != dataset.SeedProtocolV4Version || !info.Salt.IsZero())
}

// verifyIdentities rebuilds each row's streams from the stored seed column.
// Protocol 4.0's data streams are 3.0's, so without its salt the weights and
// statistics are still rebuilt right; only the names are not.
func verifyIdentities(info SplitInfo, rows []dataset.Row) ([]MLP, error) {
	switch info.Protocol {
	case dataset.SeedProtocolV3Version, dataset.SeedProtocolV4Version:
		list := make([]int64, len(rows))
		for i, r := range rows {
			list[i] = r.Seed
		}
		return Identities(list, info.Salt), nil
	case dataset.SeedProtocolV2Version:
		if len(rows) == 0 {
			return nil, nil
		}
		n := int(rows[len(rows)-1].MLPID) + 1
		all := IdentitiesV2(info.RootSeed, n)
		out := make([]MLP, len(rows))
		for i, r := range rows {
			out[i] = all[r.MLPID]
			if out[i].Seed != r.Seed {
				return nil, fmt.Errorf("row %d: mlp_seed %d is not the protocol-2.0 estimator seed %d of root seed %d", i, r.Seed, out[i].Seed, info.RootSeed)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("seed protocol %q cannot be verified: whestbake knows 2.0, 3.0 and 4.0", info.Protocol)
}

// IdentitiesV2 is protocol 2.0: one root seed, SeedSequence(root).spawn(3n); the
// stored mlp_seed is the estimator seed.
func IdentitiesV2(root uint64, n int) []MLP {
	streams := seeds.DeriveV2(root, n)
	out := make([]MLP, n)
	est := make([]int64, n)
	for i, st := range streams {
		est[i] = int64(st.EstimatorSeed)
		out[i] = MLP{Index: i, Seed: est[i], Streams: st}
	}
	names := Names(est)
	for i := range out {
		out[i].Name = names[i]
	}
	return out
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
