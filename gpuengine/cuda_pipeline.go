//go:build cuda

package gpuengine

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/cu"
	cublas "gorgonia.org/cu/blas"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// pipelineRunner runs the cuBLAS pipeline (internal/cudakernel/pipeline.cu): per chunk of
// shape.Rows samples gen_inputs, then per layer a GEMM and relu_tilesum. With gemm nil
// the GEMM is layer_reference, the forward contract itself.
type pipelineRunner struct {
	shape                cudakernel.PipelineShape
	gen, reference, sums cu.Function
	gemm                 *cublas.Standard
	itemGrid             int // CTAs of the grid-stride kernels
	weights, x, y        cu.DevicePtr
	words, flag          cu.DevicePtr
	key                  uint64
	host                 []uint64
}

const pipelineBlock = 256 // threads per CTA of gen_inputs and layer_reference

func newPipelineRunner(d *cudaDevice, shape cudakernel.PipelineShape, useCuBLAS bool) (*pipelineRunner, error) {
	mod, err := d.compile("pipeline.cu", cudakernel.PipelineSource, shape.Defines())
	if err != nil {
		return nil, err
	}
	r := &pipelineRunner{shape: shape, itemGrid: 32 * d.sms}
	for _, f := range []struct {
		fn   *cu.Function
		name string
	}{{&r.gen, "gen_inputs"}, {&r.reference, "layer_reference"}, {&r.sums, "relu_tilesum"}} {
		if *f.fn, err = mod.Function(f.name); err != nil {
			return nil, fmt.Errorf("cuda: %s not in the module: %v", f.name, err)
		}
	}
	if useCuBLAS {
		// Default math mode (no TF32), default stream, one handle: cuBLAS's reproducible setting.
		r.gemm = &cublas.Standard{}
		if err := r.gemm.Init(); err != nil {
			return nil, fmt.Errorf("cublas: %v", err)
		}
	}
	w, rows := int64(shape.W), int64(shape.Rows)
	r.host = make([]uint64, cudakernel.Digits*shape.Values())
	for _, b := range []struct {
		p    *cu.DevicePtr
		what string
		n    int64
	}{
		{&r.weights, "weights", 4 * int64(shape.D) * w * w},
		{&r.x, "activations", 4 * rows * w},
		{&r.y, "activations", 4 * rows * w},
		{&r.words, "totals", int64(8 * len(r.host))},
		{&r.flag, "divergence flag", 8},
	} {
		if *b.p, err = alloc(b.what, b.n); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *pipelineRunner) load(weights []float32, key [2]uint32) error {
	if err := cu.MemcpyHtoD(r.weights, unsafe.Pointer(&weights[0]), int64(4*len(weights))); err != nil {
		return fmt.Errorf("cuda: uploading weights: %v", err)
	}
	r.key = cudakernel.PackKey(key)
	return nil
}

// launch starts fn with 8-byte arguments.
func launch(name string, fn cu.Function, gx, gy, block int, args ...*uint64) error {
	ps := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		ps[i] = unsafe.Pointer(a)
	}
	if err := fn.Launch(gx, gy, 1, block, 1, 1, 0, cu.NoStream, ps); err != nil {
		return fmt.Errorf("cuda: launching %s: %v", name, err)
	}
	return nil
}

// devFloats views n float32 of device memory as a slice for gorgonia's cuBLAS wrapper,
// which only passes &s[0] on to cuBLAS; Go never reads through it.
func devFloats(p cu.DevicePtr, n int) []float32 {
	return unsafe.Slice(*(**float32)(unsafe.Pointer(&p)), n)
}

func (r *pipelineRunner) run(first, end int64) ([]exact.Acc, error) {
	if err := clearTotals(r.words, r.flag, len(r.host)); err != nil {
		return nil, err
	}
	w, rows := r.shape.W, int64(r.shape.Rows)
	sx, sy := r.shape.SumGrid()
	items := func(n int64) int { return int(min((n+pipelineBlock-1)/pipelineBlock, int64(r.itemGrid))) }
	for c0 := first; c0 < end; c0 += rows {
		x, y := uint64(r.x), uint64(r.y)
		rowsArg, c0Arg, valid := uint64(rows), uint64(c0), uint64(min(rows, end-c0))
		words, flag := uint64(r.words), uint64(r.flag)
		if err := launch("gen_inputs", r.gen, items(rows*int64((w+3)/4)), 1, pipelineBlock, &x, &rowsArg, &r.key, &c0Arg, &valid); err != nil {
			return nil, err
		}
		for l := 0; l < r.shape.D; l++ {
			wl := uint64(r.weights) + uint64(4*l*w*w)
			if r.gemm != nil {
				// Row-major Y = X·W_l is column-major Yᵀ = W_lᵀ·Xᵀ: no transposes, m = W, n = rows.
				r.gemm.Sgemm(blas.NoTrans, blas.NoTrans, w, int(rows), w, 1, devFloats(cu.DevicePtr(wl), w*w), w,
					devFloats(cu.DevicePtr(x), int(rows)*w), w, 0, devFloats(cu.DevicePtr(y), int(rows)*w), w)
				if err := r.gemm.Err(); err != nil {
					return nil, fmt.Errorf("cublas: Sgemm of layer %d: %v", l, err)
				}
			} else if err := launch("layer_reference", r.reference, items(rows*int64(w)), 1, pipelineBlock, &y, &x, &wl, &rowsArg); err != nil {
				return nil, err
			}
			layer := uint64(l)
			if err := launch("relu_tilesum", r.sums, sx, sy, cudakernel.PipelineColsPerCTA, &y, &rowsArg, &valid, &layer, &words, &flag); err != nil {
				return nil, err
			}
			x, y = y, x
		}
	}
	return readTotals(r.words, r.flag, r.host, r.shape.Values())
}
