// Package cudakernel holds the CUDA C sources of the GPU engine, embedded as strings for
// NVRTC, and the pure-Go arithmetic around their launches: geometry, compile options,
// weight padding and the decoding of the kernels' exact totals. It has no cgo, so all
// of it — and, through a g++ host build of the very same sources, the kernels'
// arithmetic — is tested on machines without a GPU, in host_test.go.
//
// The sources implement docs/ALGORITHM.md's `philox` algorithm:
//
//	types.cuh     integer types and portability helpers
//	philox.cuh    Philox4x32-10 and the fixed-operation Box–Muller transform
//	fixed.cuh     floor(T·2^64) fixed point, 192-bit and carry-save accumulation, tile sums
//	tile.cuh      a fused kernel's CTA tile: inputs, layer tile sums, the exact slot
//	cta.cuh       the fused kernels' CTA loop: tiles, layers, weight slices
//	forward.cuh   the forward contract as a plain fma chain
//	fused.cu      mlp_fused: inputs, all layers and statistics in one kernel
//	pipeline.cu   gen_inputs, layer_reference and relu_tilesum around cublasSgemm
package cudakernel

import (
	_ "embed"
	"fmt"
)

// Header is a file the sources #include; NVRTC resolves includes only among the
// headers it is handed.
type Header struct {
	Name, Source string
}

var (
	//go:embed types.cuh
	typesCUH string
	//go:embed philox.cuh
	philoxCUH string
	//go:embed fixed.cuh
	fixedCUH string
	//go:embed forward.cuh
	forwardCUH string
	//go:embed tile.cuh
	tileCUH string
	//go:embed cta.cuh
	ctaCUH string
)

// FusedSource is fused.cu, the source of the kernel mlp_fused.
//
//go:embed fused.cu
var FusedSource string

// PipelineSource is pipeline.cu, the source of gen_inputs, layer_reference and relu_tilesum.
//
//go:embed pipeline.cu
var PipelineSource string

// Headers returns the headers the sources include.
func Headers() []Header {
	return []Header{
		{"types.cuh", typesCUH},
		{"philox.cuh", philoxCUH},
		{"fixed.cuh", fixedCUH},
		{"forward.cuh", forwardCUH},
		{"tile.cuh", tileCUH},
		{"cta.cuh", ctaCUH},
	}
}

// MinComputeCapability is the oldest architecture the sources run on: mlp_fused
// streams weights with cp.async, which needs sm_80.
const MinComputeCapability = 80

// Target is what NVRTC compiles for: machine code for exactly one device
// architecture, a cubin for sm_XY assembled by the toolkit's own ptxas, whose
// resource report then holds for the device; or PTX for compute_XY, which the
// driver's JIT assembles at load time. PTX is the fallback: its assembler is the
// driver's, so `make cuda-check`'s report says nothing about it.
type Target struct {
	Major, Minor int
	PTX          bool
}

// Arch is the target's --gpu-architecture value.
func (t Target) Arch() string {
	if t.PTX {
		return fmt.Sprintf("compute_%d%d", t.Major, t.Minor)
	}
	return fmt.Sprintf("sm_%d%d", t.Major, t.Minor)
}

// Options are the NVRTC flags for target plus the source's -D constants. They pin the
// arithmetic: --fmad=false, so no contraction of a·b+c into an FMA the source did not
// write, IEEE division and square root, subnormals kept; no fast-math flag
// may ever be added, or the CPU twin no longer matches. A cubin is compiled with
// ptxas's -v, so NVRTC's log carries the register and spill report.
func Options(target Target, defines []string) []string {
	opts := []string{
		"--gpu-architecture=" + target.Arch(),
		"--std=c++17",
		"--fmad=false",
		"--ftz=false",
		"--prec-div=true",
		"--prec-sqrt=true",
	}
	if !target.PTX {
		opts = append(opts, "--ptxas-options=-v")
	}
	return append(opts, defines...)
}

// PackKey packs a Philox key into the kernels' 64-bit key parameter, k0 in the low half.
func PackKey(k [2]uint32) uint64 {
	return uint64(k[0]) | uint64(k[1])<<32
}
