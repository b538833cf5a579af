package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/mlps"
)

// FieldPicks is the field of Input.Picks, as its messages name it
// through Input.Names.
const FieldPicks = "mlps"

// Input is what Dataset recomputes of an open dataset.
type Input struct {
	Dataset *dataset.Dir
	// Split limits the check to one split; "" checks every split.
	Split string
	// Picks are the row positions to check in each split: comma-separated,
	// or "all"; "" checks K rows spread evenly.
	Picks string
	K     int
	// MaxSamples recomputes the statistics from that many samples only,
	// compared within 5/√MaxSamples; 0 recomputes them bit for bit.
	MaxSamples int64
	Threads    int
	// Dot overrides a numpy split's recorded dot product; "" keeps it.
	Dot string
	// Getenv reads dataset.SaltEnv for a withheld salt; nil is os.Getenv.
	Getenv func(string) string
	// Names is how the front end calls a field in the messages, as the CLI
	// calls mlps --mlps; nil keeps the fields' own names.
	Names func(field string) string
}

// VerifiedSplit is one split's verdicts.
type VerifiedSplit struct {
	Name   string
	Info   SplitInfo
	Checks []Check
}

// The fates of an MLP's name in a verification, as VerifiedSplit.NameCheck
// tells them.
const (
	NameOK           = "ok"
	NameMismatch     = "mismatch"
	NamePartial      = "partial"
	NameSaltWithheld = "salt withheld"
)

// NameCheck is what became of c's name: checked, NameOK or NameMismatch,
// or not, because the dataset is a partial or its salt is withheld.
func (s VerifiedSplit) NameCheck(c Check) string {
	switch {
	case c.NameTested && c.NameOK:
		return NameOK
	case c.NameTested:
		return NameMismatch
	case s.Info.Complete:
		return NameSaltWithheld
	}
	return NamePartial
}

// Output is every verified split's verdicts, in the dataset's order,
// and how many MLPs failed.
type Output struct {
	Splits []VerifiedSplit
	Failed int
}

// Dataset recomputes the picked MLPs of in.Dataset in one pass over
// its rows: each picked row is recomputed as it streams by, and the
// prepared tree compared with it, so memory stays at one row however large
// the dataset.
//
// A tf32x3 split is rerun bit for bit on this machine's GPU when it computes the split's
// bits, with the same architecture and kernel as bakeapi.TensorCores.SameBits says. Else
// it is compared with the fp32 CPU twin on the same inputs within
// bakeapi.TF32x3MeanTolerance.
func Dataset(ctx context.Context, in Input) (Output, error) {
	d := in.Dataset
	gpu := &tensorCores{}
	defer gpu.close()
	verifiers, err := in.verifiers(ctx, gpu)
	if err != nil {
		return Output{}, err
	}
	err = d.ScanPrepared(func(s *dataset.SplitData, r dataset.Row) error {
		if sv, ok := verifiers[s.Name]; ok {
			return sv.verifier.Add(r)
		}
		return nil
	})
	if err != nil {
		return Output{}, err
	}
	var out Output
	for _, s := range d.Splits {
		sv, ok := verifiers[s.Name]
		if !ok {
			continue
		}
		checks, err := sv.verifier.Checks()
		if err != nil {
			return Output{}, err
		}
		for _, c := range checks {
			if !c.OK {
				out.Failed++
			}
		}
		out.Splits = append(out.Splits, VerifiedSplit{Name: s.Name, Info: sv.info, Checks: checks})
	}
	return out, nil
}

// splitVerifier recomputes the picked MLPs of one split.
type splitVerifier struct {
	info     SplitInfo
	verifier *Verifier
}

// tensorCores is the CUDA engine a tf32x3 verification reruns on, opened at the first
// tf32x3 split; there is none when this binary or machine has no GPU.
type tensorCores struct {
	eng    gpuengine.Engine
	opened bool
}

// engine is the GPU engine when it computes the bits of id for spec, else nil.
func (g *tensorCores) engine(spec bakeapi.Spec, id bakeapi.TensorCores) gpuengine.Engine {
	if !g.opened {
		g.opened = true
		g.eng, _ = gpuengine.Open(gpuengine.DeviceCUDA, spec.Sampler)
	}
	if g.eng == nil {
		return nil
	}
	d, err := gpuengine.DescribeFor(g.eng, spec)
	if here, ok := bakeapi.ParseTensorCores(d.Kernel); err != nil || !ok || !here.SameBits(id) {
		return nil
	}
	return g.eng
}

func (g *tensorCores) close() {
	if g.eng != nil {
		_ = gpuengine.Close(g.eng)
	}
}

// verifiers makes a verifier, by split name, for each split in.Split
// leaves in.
func (in Input) verifiers(ctx context.Context, gpu *tensorCores) (map[string]splitVerifier, error) {
	d := in.Dataset
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	verifiers := map[string]splitVerifier{}
	for _, s := range d.Splits {
		if in.Split != "" && s.Name != in.Split {
			continue
		}
		info, err := splitInfo(d, s, in.Dot, getenv)
		if err != nil {
			return nil, err
		}
		picks, err := in.picks(int(d.Info.Split(s.Name).NMLPs))
		if err != nil {
			return nil, err
		}
		v, err := NewVerifier(ctx, info, picks, in.MaxSamples, in.Threads)
		if err != nil {
			return nil, err
		}
		if info.Spec.Precision == bakeapi.PrecisionTF32x3 {
			v.gpu = gpu.engine(info.Spec, info.TensorCores)
		}
		verifiers[s.Name] = splitVerifier{info, v}
	}
	return verifiers, nil
}

// splitInfo reads what verification needs from the dataset's metadata;
// per-split entries of a combined dataset take precedence over top-level
// keys.
func splitInfo(d *dataset.Dir, s dataset.SplitData, dot string, getenv func(string) string,
) (SplitInfo, error) {
	md, sp := d.Info, d.Info.Split(s.Name)
	info := SplitInfo{
		Spec:     bakeapi.Spec{Width: s.Width, Depth: s.Depth},
		Protocol: md.SeedProtocol.Version,
		Complete: !md.IsPartial,
	}
	if md.NSamples <= 0 {
		return info, fmt.Errorf("%s: metadata.json has no positive n_samples; "+
			"cannot recompute statistics", d.Path)
	}
	info.Spec.NSamples = md.NSamples
	switch info.Protocol {
	case dataset.SeedProtocolV2Version:
		if sp.Seed == nil || !sp.Seed.IsUint64() {
			return info, fmt.Errorf(
				"%s: protocol 2.0 split %s has no integer root seed in metadata",
				d.Path,
				s.Name,
			)
		}
		info.RootSeed = sp.Seed.Uint64()
	case dataset.SeedProtocolV4Version:
		// Weights and statistics do not depend on the salt, so a withheld
		// one that was not given only leaves the names unchecked.
		salt, err := mlps.DatasetSalt(md.SeedProtocol, getenv)
		if err != nil && !errors.Is(err, mlps.ErrSaltWithheld) {
			return info, fmt.Errorf("%s: %w", d.Path, err)
		}
		info.Salt = salt
	}
	switch sampler := cmp.Or(sp.Sampler, md.Sampler); {
	case sampler != "":
		info.Spec.Sampler = bakeapi.Sampler(sampler)
	case cmp.Or(sp.Backend, md.Backend) == "flopscope":
		// whestbench's CPU backend is our numpy sampler.
		info.Spec.Sampler = bakeapi.SamplerNumpy
	}
	if info.Spec.Sampler == bakeapi.SamplerNumpy {
		recorded := cmp.Or(dot, sp.DotProduct, md.DotProduct, string(bakeapi.DotFMA))
		info.Spec.Dot = bakeapi.DotProduct(recorded)
	}
	if cmp.Or(sp.AlgorithmVersion, md.AlgorithmVersion) == bakeapi.PhiloxTF32x3Algorithm {
		info.Spec.Precision = bakeapi.PrecisionTF32x3
		engine := cmp.Or(sp.Engine, md.Engine)
		id, ok := bakeapi.ParseTensorCores(engine)
		if !ok {
			return info, fmt.Errorf("%s: split %s is a tf32x3 bake whose engine %q names no "+
				"tensor cores (arch=, kernel=); its bits cannot be attributed", d.Path, s.Name, engine)
		}
		info.TensorCores = id
	}
	return info, nil
}

// name is field as in.Names calls it.
func (in Input) name(field string) string {
	if in.Names == nil {
		return field
	}
	return in.Names(field)
}

// picks are the row positions to check of a split of n rows: the listed
// ones, all of them, or K spread evenly.
func (in Input) picks(n int) ([]int, error) {
	if in.Picks == "all" || (in.Picks == "" && in.K >= n) {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	if in.Picks != "" {
		var out []int
		for _, p := range strings.Split(in.Picks, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || i < 0 || i >= n {
				return nil, fmt.Errorf("%s: %q is not a row position in [0, %d)",
					in.name(FieldPicks), p, n)
			}
			out = append(out, i)
		}
		return out, nil
	}
	out := make([]int, in.K)
	for i := range out {
		out[i] = i * (n - 1) / max(1, in.K-1)
	}
	return out, nil
}
