package bakeapi

import (
	"fmt"
	"regexp"
	"strings"
)

// Sampler names the input distribution's generator and the summation contract.
type Sampler string

const (
	// SamplerPhilox is exact by construction on the CPU twin and on GPUs.
	SamplerPhilox Sampler = "philox"
	// SamplerNumpy is whestbench's CPU backend: its rows, and its statistics bit
	// for bit where numpy's BLAS sums as Dot says, as docs/NUMPY.md shows.
	SamplerNumpy Sampler = "numpy"
)

// DotProduct is the float32 dot-product rounding of the numpy sampler: the
// reference fixtures were baked with a fused multiply-add per term, which is
// what numpy computes on OpenBLAS's FMA kernels while the sum is not split
// into blocks. muladd rounds the product and the sum separately, as a BLAS
// without FMA does. docs/NUMPY.md measures which real numpy builds match.
type DotProduct string

const (
	DotFMA    DotProduct = "fma"
	DotMulAdd DotProduct = "muladd"
)

// Algorithm versions recorded in metadata; a change of any output bit needs a new one.
const (
	NumpyAlgorithm  = "numpy-pcg64-chunked/2"
	PhiloxAlgorithm = "philox4x32-10-boxmuller-tile32-fix64/1"
)

// Limits that catch typos before hours of compute, and allocations that cannot succeed.
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
	// ChunkSize is the philox step in samples, rounded up to whole tiles; 0 is
	// the engine's default. It never changes results; the numpy sampler's
	// chunking is whestbench's and cannot be set.
	ChunkSize int `json:",omitempty"`
	// SeedProtocol decides the estimator seeds and names, never weights or
	// statistics. "" is 3.0, so recorded inputs without the field decode
	// unchanged.
	SeedProtocol SeedProtocol `json:",omitempty"`
	// Salt is protocol 4.0's salt declaration, zero under 3.0.
	Salt Salt `json:",omitzero"`
	// Precision is the philox forward pass's arithmetic: "" for fp32, or tf32x3.
	Precision Precision `json:",omitempty"`
}

// Algorithm returns the algorithm version of s's sampler and precision.
func (s Spec) Algorithm() string {
	switch {
	case s.Sampler == SamplerNumpy:
		return NumpyAlgorithm
	case s.Precision == PrecisionTF32x3:
		return PhiloxTF32x3Algorithm
	}
	return PhiloxAlgorithm
}

// Field names of a Spec and a split, as FieldError reports them. The CLI and
// the YAML config print their own name for each, such as --width and bake.width.
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
// FieldErrors, nil when s is usable.
func (s Spec) Validate() error {
	var errs FieldErrors
	errs.inRange(FieldWidth, int64(s.Width), MaxWidth, "neurons per layer")
	errs.inRange(FieldDepth, int64(s.Depth), MaxDepth, "layers")
	errs.inRange(
		FieldNSamples,
		s.NSamples,
		MaxNSamples,
		"Monte Carlo samples per MLP; 1e9 and 1_000_000_000 are accepted",
	)
	switch s.Sampler {
	case SamplerPhilox:
		if s.Dot != "" {
			errs.add(
				FieldDotProduct,
				"%q applies to the numpy sampler only: remove it for philox",
				s.Dot,
			)
		}
		if s.ChunkSize < 0 || s.ChunkSize > MaxChunkSize {
			errs.add(
				FieldChunkSize,
				"= %d: must be in [1, %d], or 0 for the engine's default",
				s.ChunkSize,
				MaxChunkSize,
			)
		}
	case SamplerNumpy:
		if s.Dot != DotFMA && s.Dot != DotMulAdd {
			errs.add(
				FieldDotProduct,
				"%q is unknown: use fma (whestbench's fixtures) or muladd (a BLAS without FMA)",
				s.Dot,
			)
		}
		if s.ChunkSize != 0 {
			errs.add(
				FieldChunkSize,
				"= %d: the numpy sampler always uses whestbench's chunk rule "+
					"(it sets the summation order); remove it",
				s.ChunkSize,
			)
		}
	default:
		errs.add(
			FieldSampler,
			"%q is unknown: use philox (exact, runs on GPUs) "+
				"or numpy (whestbench's CPU backend)",
			s.Sampler,
		)
	}
	s.checkPrecision(&errs)
	s.validateSeeding(&errs)
	return errs.orNil()
}

// Split and config names. A split name is published where two readers
// refuse some names, so it must pass both:
//   - whestbench checks every split and config name of the metadata it
//     loads against [a-z][a-z0-9]*(-[a-z0-9]+)*, in dataset_io.py
//     _validate_split_name of v0.16;
//   - Hugging Face datasets refuses a split name that does not match
//     ^\w+(\.\w+)*$, naming.py's _split_re, which splits.py NamedSplit
//     and utils/metadata.py MetadataConfigs apply to a card's configs, so
//     no '-'. It takes "all" for every split at once in splits.py
//     Split.__new__, and builder.py refuses to build a split of that name.
//
// Both together leave [a-z][a-z0-9]* without "all". Python's \w is
// Unicode-aware, so datasets alone would load "café"; whestbench's [a-z] is
// ASCII only, so such names are refused here too. A config name is never a
// split name of datasets, whose builder.py BuilderConfig refuses only the
// characters Windows forbids in a path, so configs keep whestbench's rule.
// So does reading a dataset: its split names may hold a '-' whestbench takes.
var (
	whestbenchNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	splitNameRE      = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// allSplits is datasets' name for the union of a dataset's splits.
const allSplits = "all"

// MaxSplitNameLen bounds a split or config name. The name is part of file
// names — data/<split>-NNNNN-of-MMMMM.parquet, and its temporary copies,
// which add about 45 bytes — that must fit in a file name of 255 bytes,
// NAME_MAX on Linux and most file systems. 128 leaves room for all of
// them, so a name is refused up front rather than when the shard is
// written, after every MLP was computed.
const MaxSplitNameLen = 128

// CheckSplitName reports whether name is usable as the split name of a new
// dataset: one that whestbench and Hugging Face datasets both load. Its
// message states the rule and suggests a name that follows it; it names
// neither a flag nor a key.
func CheckSplitName(name string) error {
	if err := checkNameLen(name); err != nil {
		return err
	}
	if name == allSplits {
		return fmt.Errorf("%q is what Hugging Face datasets calls every split at once "+
			"(load_dataset(..., split=\"all\") loads them all): choose another name such as %q",
			name, suggestSplitName(name))
	}
	if !splitNameRE.MatchString(name) {
		return fmt.Errorf("%q cannot be loaded: a split name is a lowercase ASCII letter followed "+
			"by lowercase ASCII letters and digits, [a-z][a-z0-9]* (Hugging Face datasets refuses "+
			"'-' in a split name, whestbench refuses '_', '.' and capitals); use %q",
			name, suggestSplitName(name))
	}
	return nil
}

// CheckWhestbenchName reports whether whestbench accepts name as a config
// name, or as the split name of a dataset it reads; CheckSplitName narrows
// that for new datasets. Its message names neither a flag nor a key.
func CheckWhestbenchName(name string) error {
	if err := checkNameLen(name); err != nil {
		return err
	}
	if !whestbenchNameRE.MatchString(name) {
		return fmt.Errorf("%q does not match [a-z][a-z0-9]*(-[a-z0-9]+)* (whestbench's rule for "+
			"split and config names: lowercase ASCII letters and digits, a letter first, single "+
			"hyphens between them); choose a name such as \"public\" or \"full-v2\"", name)
	}
	return nil
}

func checkNameLen(name string) error {
	if name == "" {
		return fmt.Errorf("is empty: choose a name such as \"public\"")
	}
	if len(name) > MaxSplitNameLen {
		return fmt.Errorf("is %d characters long: at most %d fit in the data file names it is "+
			"part of; choose a shorter name", len(name), MaxSplitNameLen)
	}
	return nil
}

// suggestSplitName is a name CheckSplitName accepts, made from name: its
// ASCII letters, lowercased, and digits, a letter first.
func suggestSplitName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
		}
	}
	s := b.String()
	switch {
	case s == "":
		return "public"
	case s == allSplits:
		return "allsplits"
	case s[0] < 'a':
		s = "split" + s
	}
	return s[:min(len(s), MaxSplitNameLen)]
}

// ValidateSplit checks a split's name, HF config name and MLP count.
func ValidateSplit(name, config string, nMLPs int64) error {
	var errs FieldErrors
	if err := CheckSplitName(name); err != nil {
		errs.add(FieldSplit, "%v", err)
	}
	if err := CheckWhestbenchName(config); err != nil {
		errs.add(FieldConfig, "%v", err)
	}
	errs.inRange(FieldNMLPs, nMLPs, MaxNMLPs, "MLPs in the split")
	return errs.orNil()
}
