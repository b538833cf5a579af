package bakeapi

import (
	"fmt"
	"regexp"
)

// Sampler names the input distribution's generator and the summation contract.
type Sampler string

const (
	// SamplerPhilox is exact by construction on the CPU twin and on GPUs.
	SamplerPhilox Sampler = "philox"
	// SamplerNumpy is whestbench's CPU backend, bit for bit.
	SamplerNumpy Sampler = "numpy"
)

// DotProduct is the float32 dot-product rounding of the numpy sampler: the
// reference fixtures were baked with a fused multiply-add per term (what
// numpy computes on OpenBLAS's FMA kernels while the sum is not split into
// blocks); muladd rounds the product and the sum separately, as a BLAS
// without FMA does. docs/NUMPY.md measures which real numpy builds match.
type DotProduct string

const (
	DotFMA    DotProduct = "fma"
	DotMulAdd DotProduct = "muladd"
)

// Algorithm versions recorded in metadata; a change of any output bit needs a new one.
const (
	NumpyAlgorithm  = "numpy-pcg64-chunked/1"
	PhiloxAlgorithm = "philox4x32-10-boxmuller-tile32-fix64/1"
)

// Limits that catch typos before hours of compute (and allocations that cannot succeed).
const (
	MaxWidth    = 1 << 14
	MaxDepth    = 1 << 10
	MaxNMLPs    = 1 << 24
	MaxNSamples = int64(1) << 50
	// MaxChunkSize bounds the philox step; larger steps only cost memory.
	MaxChunkSize = 1 << 30
)

// Spec is what every MLP of a bake shares and what decides its bits: the
// network's shape, the sample count, the sampler and the seed protocol. It is
// the one type for this concept: the CLI's flags, the YAML config, the
// workflow input, the engines and the dataset writer all take a Spec.
type Spec struct {
	Width    int
	Depth    int
	NSamples int64
	Sampler  Sampler
	// Dot is the numpy sampler's dot product; empty for philox.
	Dot DotProduct `json:",omitempty"`
	// ChunkSize is the philox step in samples (rounded up to whole tiles; 0 =
	// the engine's default). It never changes results; the numpy sampler's
	// chunking is whestbench's and cannot be set.
	ChunkSize int `json:",omitempty"`
	// SeedProtocol decides the estimator seeds and names (never weights or
	// statistics); "" is 3.0, so inputs recorded before 4.0 existed decode
	// unchanged.
	SeedProtocol SeedProtocol `json:",omitempty"`
	// Salt is protocol 4.0's salt declaration, zero under 3.0.
	Salt Salt `json:",omitzero"`
}

// Algorithm returns the algorithm version of s's sampler.
func (s Spec) Algorithm() string {
	if s.Sampler == SamplerNumpy {
		return NumpyAlgorithm
	}
	return PhiloxAlgorithm
}

// Field names of a Spec and a split, as FieldError reports them. The CLI and
// the YAML config print their own name for each (--width, bake.width).
const (
	FieldWidth      = "width"
	FieldDepth      = "depth"
	FieldNSamples   = "n-samples"
	FieldSampler    = "sampler"
	FieldDotProduct = "dot-product"
	FieldChunkSize  = "chunk-size"
	FieldNMLPs      = "n-mlps"
	FieldMLPSeeds   = "mlp-seeds"
	FieldSplit      = "split"
	FieldConfig     = "config"
)

// Validate checks every field of s and returns all problems at once as
// FieldErrors (nil when s is usable).
func (s Spec) Validate() error {
	var errs FieldErrors
	errs.inRange(FieldWidth, int64(s.Width), MaxWidth, "neurons per layer")
	errs.inRange(FieldDepth, int64(s.Depth), MaxDepth, "layers")
	errs.inRange(FieldNSamples, s.NSamples, MaxNSamples, "Monte Carlo samples per MLP; 1e9 and 1_000_000_000 are accepted")
	switch s.Sampler {
	case SamplerPhilox:
		if s.Dot != "" {
			errs.add(FieldDotProduct, "%q applies to the numpy sampler only: remove it for philox", s.Dot)
		}
		if s.ChunkSize < 0 || s.ChunkSize > MaxChunkSize {
			errs.add(FieldChunkSize, "= %d: must be in [1, %d], or 0 for the engine's default", s.ChunkSize, MaxChunkSize)
		}
	case SamplerNumpy:
		if s.Dot != DotFMA && s.Dot != DotMulAdd {
			errs.add(FieldDotProduct, "%q is unknown: use fma (whestbench's fixtures) or muladd (a BLAS without FMA)", s.Dot)
		}
		if s.ChunkSize != 0 {
			errs.add(FieldChunkSize, "= %d: the numpy sampler always uses whestbench's chunk rule (it sets the summation order); remove it", s.ChunkSize)
		}
	default:
		errs.add(FieldSampler, "%q is unknown: use philox (exact, runs on GPUs) or numpy (whestbench's CPU backend, bit for bit)", s.Sampler)
	}
	s.validateSeeding(&errs)
	return errs.orNil()
}

// splitNameRE is the HF Hub split-name convention (lowercase ASCII, digits,
// single hyphens between alphanumeric runs); configs follow the same rule.
var splitNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// MaxSplitNameLen bounds a split (or config) name. The name is part of file
// names — data/<split>-NNNNN-of-MMMMM.parquet, and its temporary copies,
// which add about 45 bytes — that must fit in a file name of 255 bytes
// (NAME_MAX on Linux and most file systems); 128 leaves room for all of
// them, where a longer name failed only when the shard was written, after
// every MLP was computed.
const MaxSplitNameLen = 128

// CheckSplitName reports whether name is usable as a split (or config) name.
// Its message names neither a flag nor a key.
func CheckSplitName(name string) error {
	if name == "" {
		return fmt.Errorf("is empty: choose a name such as \"public\" or \"my-split\"")
	}
	if len(name) > MaxSplitNameLen {
		return fmt.Errorf("is %d characters long: at most %d fit in the data file names it is part of; choose a shorter name", len(name), MaxSplitNameLen)
	}
	if !splitNameRE.MatchString(name) {
		return fmt.Errorf("%q does not match [a-z][a-z0-9]*(-[a-z0-9]+)* "+
			"(HF Hub split-name convention: lowercase ASCII, digits, single hyphens "+
			"between alphanumeric runs); choose a name such as \"public\" or \"my-split\"", name)
	}
	return nil
}

// ValidateSplit checks a split's name, HF config name and MLP count.
func ValidateSplit(name, config string, nMLPs int64) error {
	var errs FieldErrors
	if err := CheckSplitName(name); err != nil {
		errs.add(FieldSplit, "%v", err)
	}
	if err := CheckSplitName(config); err != nil {
		errs.add(FieldConfig, "%v", err)
	}
	errs.inRange(FieldNMLPs, nMLPs, MaxNMLPs, "MLPs in the split")
	return errs.orNil()
}
