//go:build cuda

package gpuengine

import (
	"errors"
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/cu"
	cublas "gorgonia.org/cu/blas"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// pipelineRunner runs the cuBLAS pipeline of internal/cudakernel/pipeline.cu: per chunk of
// shape.Rows samples gen_inputs, then per layer a GEMM and relu_tilesum. With gemm nil
// the GEMM is layer_reference, the forward contract itself.
type pipelineRunner struct {
	shape                cudakernel.PipelineShape
	mod                  *module
	gen, reference, sums cu.Function
	gemm                 *cublas.Standard
	itemGrid             int // CTAs of the grid-stride kernels
	weights, x, y        buffer
	words, flag          buffer
	key                  uint64
	host                 []uint64
	clock                *phaseClock // nil except under CuBLASPhases
}

const pipelineBlock = 256 // threads per CTA of gen_inputs and layer_reference

func newPipelineRunner(
	d *cudaDevice,
	shape cudakernel.PipelineShape,
	useCuBLAS bool,
) (*pipelineRunner, error) {
	mod, err := d.compile("pipeline.cu", cudakernel.PipelineSource, shape.Defines())
	if err != nil {
		return nil, err
	}
	r := &pipelineRunner{shape: shape, mod: mod, itemGrid: 32 * d.sms}
	if err := r.setup(useCuBLAS); err != nil {
		return nil, errors.Join(err, r.free())
	}
	return r, nil
}

func (r *pipelineRunner) setup(useCuBLAS bool) error {
	var err error
	for _, f := range []struct {
		fn   *cu.Function
		name string
	}{{&r.gen, "gen_inputs"}, {&r.reference, "layer_reference"}, {&r.sums, "relu_tilesum"}} {
		if *f.fn, err = r.mod.mod.Function(f.name); err != nil {
			return fmt.Errorf("cuda: %s not in the module: %v", f.name, err)
		}
	}
	if useCuBLAS {
		// Default math mode without TF32, default stream, one handle: cuBLAS's reproducible setting.
		gemm := &cublas.Standard{}
		if err := gemm.Init(); err != nil {
			return fmt.Errorf("cublas: %v", err)
		}
		r.gemm = gemm
		cudaHoldings.handles.Add(1)
	}
	shape := r.shape
	w, rows := int64(shape.W), int64(shape.Rows)
	r.host = make([]uint64, cudakernel.Digits*shape.Values())
	for _, b := range []struct {
		buf  *buffer
		what string
		size int64
	}{
		{&r.weights, "weights", 4 * int64(shape.D) * w * w},
		{&r.x, "activations", 4 * rows * w},
		{&r.y, "activations", 4 * rows * w},
		{&r.words, "totals", int64(8 * len(r.host))},
		{&r.flag, "divergence flag", 8},
	} {
		if *b.buf, err = alloc(b.what, b.size); err != nil {
			return err
		}
	}
	return nil
}

// free releases the runner's buffers, cuBLAS handle and module. Device thread only.
func (r *pipelineRunner) free() error {
	err := freeBuffers(r.weights, r.x, r.y, r.words, r.flag)
	r.weights = buffer{}
	r.x = buffer{}
	r.y = buffer{}
	r.words = buffer{}
	r.flag = buffer{}
	if r.gemm != nil {
		if e := r.gemm.Close(); e != nil {
			err = errors.Join(err, fmt.Errorf("cublas: destroying the handle: %v", e))
		} else {
			cudaHoldings.handles.Add(-1)
		}
		r.gemm = nil
	}
	if r.mod != nil {
		err = errors.Join(err, r.mod.unload())
		r.mod = nil
	}
	return err
}

// identity is "": the pipeline computes fp32 only.
func (r *pipelineRunner) identity() string { return "" }

// log lines describe how the runner was built.
func (r *pipelineRunner) log() []string {
	summary := fmt.Sprintf(
		"pipeline W%d D%d, %d rows per GEMM: %s",
		r.shape.W,
		r.shape.D,
		r.shape.Rows,
		r.mod.target,
	)
	return append([]string{summary}, r.mod.notes...)
}

func (r *pipelineRunner) load(weights []float32, key [2]uint32) error {
	if err := r.clock.timed(phaseCopies, func() error {
		return cu.MemcpyHtoD(r.weights.ptr, unsafe.Pointer(&weights[0]), int64(4*len(weights)))
	}); err != nil {
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
	if err := r.clock.timed(
		phaseCopies,
		func() error { return clearTotals(r.words.ptr, r.flag.ptr, len(r.host)) },
	); err != nil {
		return nil, err
	}
	w, rows := r.shape.W, int64(r.shape.Rows)
	sx, sy := r.shape.SumGrid()
	items := func(n int64) int {
		return int(min((n+pipelineBlock-1)/pipelineBlock, int64(r.itemGrid)))
	}
	for c0 := first; c0 < end; c0 += rows {
		x, y := uint64(r.x.ptr), uint64(r.y.ptr)
		rowsArg, c0Arg, valid := uint64(rows), uint64(c0), uint64(min(rows, end-c0))
		words, flag := uint64(r.words.ptr), uint64(r.flag.ptr)
		if err := r.clock.timed(phaseRNG, func() error {
			return launch("gen_inputs", r.gen, items(rows*int64((w+3)/4)), 1, pipelineBlock,
				&x, &rowsArg, &r.key, &c0Arg, &valid)
		}); err != nil {
			return nil, err
		}
		for l := 0; l < r.shape.D; l++ {
			wl := uint64(r.weights.ptr) + uint64(4*l*w*w)
			if err := r.clock.timed(phaseGEMM, func() error {
				if r.gemm == nil {
					grid := items(rows * int64(w))
					return launch("layer_reference", r.reference, grid, 1, pipelineBlock,
						&y, &x, &wl, &rowsArg)
				}
				// Row-major Y = X·W_l is column-major Yᵀ = W_lᵀ·Xᵀ: no transposes,
				// m = W, n = rows.
				r.gemm.Sgemm(blas.NoTrans, blas.NoTrans, w, int(rows), w,
					1, devFloats(cu.DevicePtr(wl), w*w), w,
					devFloats(cu.DevicePtr(x), int(rows)*w), w,
					0, devFloats(cu.DevicePtr(y), int(rows)*w), w)
				if err := r.gemm.Err(); err != nil {
					return fmt.Errorf("cublas: Sgemm of layer %d: %v", l, err)
				}
				return nil
			}); err != nil {
				return nil, err
			}
			layer := uint64(l)
			if err := r.clock.timed(phaseReduce, func() error {
				return launch("relu_tilesum", r.sums, sx, sy, cudakernel.PipelineColsPerCTA,
					&y, &rowsArg, &valid, &layer, &words, &flag)
			}); err != nil {
				return nil, err
			}
			x, y = y, x
		}
	}
	var totals []exact.Acc
	if err := r.clock.timed(phaseCopies, func() error {
		var err error
		totals, err = readTotals(r.words.ptr, r.flag.ptr, r.host, r.shape.Values())
		return err
	}); err != nil {
		return nil, err
	}
	if r.clock != nil {
		if err := r.clock.collect(); err != nil {
			return nil, err
		}
	}
	return totals, nil
}
