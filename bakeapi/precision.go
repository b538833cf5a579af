package bakeapi

import (
	"fmt"
	"strconv"
	"strings"
)

// Precision is how the philox sampler's forward pass multiplies. "" is fp32: each
// output one fused multiply-add chain, as docs/ALGORITHM.md says, the CPU twin's bits
// on every engine. tf32x3 runs the CUDA engine's tensor cores in 3xTF32, as "Precision
// tf32x3" in docs/GPU.md says: faster, within TF32x3MeanTolerance of fp32 on the same
// inputs, and reproducible bit for bit on one GPU architecture only. Opt-in: nothing
// chooses it.
type Precision string

const (
	PrecisionFP32   Precision = ""
	PrecisionTF32x3 Precision = "tf32x3"
)

// FieldPrecision is the field of a Spec's precision in FieldErrors.
const FieldPrecision = "precision"

// PhiloxTF32x3Algorithm is the algorithm version of a tf32x3 philox bake: the inputs,
// tiles and exact sums of PhiloxAlgorithm, the forward pass of cudakernel's
// mlp_tf32x3, cudakernel.TF32x3Scheme.
const PhiloxTF32x3Algorithm = "philox4x32-10-boxmuller-tile32-fix64-tf32x3rn/1"

// TF32x3MeanTolerance bounds how far a tf32x3 bake's per-neuron mean may lie from the
// fp32 bake's of the same MLP and samples, relative to the largest |mean| of its layer;
// TF32x3VarianceTolerance bounds avg_variance's, relative to it. They are set from a
// CPU model of the scheme, with exact products, truncating alignment of 4 or 8 terms,
// W=256, D=8 and paired samples against an FP64 forward: per-output error 2.1e-7 of the
// pre-activations' rms, the deepest layer's means biased by at most 1e-6 of their size,
// five times that here and twice it for a variance. The first run on a GPU measures the
// real ones, as docs/GPU.md describes, and refits them.
const (
	TF32x3MeanTolerance     = 5e-6
	TF32x3VarianceTolerance = 1e-5
)

// TensorCores is what a tf32x3 bake's numbers depend on besides its Spec: the GPU and
// its architecture, the driver and NVRTC that built the kernel, the scheme and the
// sha256 of the kernel's machine code. Metadata records it as the engine, EngineTag,
// and checkpoints carry it; a resume under another identity is refused.
type TensorCores struct {
	GPU    string // the device's name, e.g. "NVIDIA H200"
	Arch   string // sm_XY
	Driver string // the driver's CUDA version, e.g. "13.0"
	NVRTC  string // e.g. "13.0"
	Scheme string // cudakernel.TF32x3Scheme
	Kernel string // sha256 of the cubin or PTX the engine loaded, hex
}

// tensorCoresTag starts a TensorCores' text.
const tensorCoresTag = "tf32x3"

// String is t as one line of key=value fields, quoted where they hold spaces:
// ParseTensorCores reads it back.
func (t TensorCores) String() string {
	return fmt.Sprintf("%s arch=%s kernel=%s gpu=%s driver=%s nvrtc=%s scheme=%s",
		tensorCoresTag, t.Arch, t.Kernel, strconv.Quote(t.GPU), t.Driver, t.NVRTC,
		strconv.Quote(t.Scheme))
}

// SameBits reports whether t and o compute the same bits: the same architecture runs
// the same machine code.
func (t TensorCores) SameBits(o TensorCores) bool {
	return t.Arch != "" && t.Arch == o.Arch && t.Kernel == o.Kernel
}

// ParseTensorCores reads t.String(), also after an engine's name and a slash, as in
// a dataset's "engine", "cuda/tf32x3 …"; ok is false for any other text.
func ParseTensorCores(s string) (t TensorCores, ok bool) {
	if _, rest, cut := strings.Cut(s, "/"); cut && !strings.HasPrefix(s, tensorCoresTag) {
		s = rest
	}
	rest, found := strings.CutPrefix(s, tensorCoresTag+" ")
	if !found {
		return TensorCores{}, false
	}
	fields := map[string]*string{
		"arch": &t.Arch, "kernel": &t.Kernel, "gpu": &t.GPU, "driver": &t.Driver,
		"nvrtc": &t.NVRTC, "scheme": &t.Scheme,
	}
	for rest != "" {
		key, after, cut := strings.Cut(rest, "=")
		dst, known := fields[key]
		if !cut || !known {
			return TensorCores{}, false
		}
		value, tail := after, ""
		if strings.HasPrefix(after, `"`) {
			q, err := strconv.QuotedPrefix(after)
			if err != nil {
				return TensorCores{}, false
			}
			value, _ = strconv.Unquote(q)
			tail = after[len(q):]
		} else if i := strings.IndexByte(after, ' '); i >= 0 {
			value, tail = after[:i], after[i:]
		}
		*dst = value
		rest = strings.TrimPrefix(tail, " ")
	}
	return t, t.Arch != "" && t.Kernel != ""
}

// checkPrecision adds s's precision problems to errs.
func (s Spec) checkPrecision(errs *FieldErrors) {
	switch s.Precision {
	case PrecisionFP32:
	case PrecisionTF32x3:
		if s.Sampler != SamplerPhilox {
			errs.add(FieldPrecision, "%q runs the philox sampler only", s.Precision)
		}
	case "fp32":
		errs.add(FieldPrecision, `"fp32" is the default: leave the precision empty for it`)
	default:
		errs.add(FieldPrecision, "%q is unknown: use fp32 (the default, the CPU twin's bits) "+
			"or tf32x3 (CUDA tensor cores, within %g of fp32)", s.Precision, TF32x3MeanTolerance)
	}
}
