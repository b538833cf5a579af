//go:build cuda

package gpuengine

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// fusedRunner launches mlp_fused (internal/cudakernel/fused.cu) once per step.
type fusedRunner struct {
	shape cudakernel.FusedShape
	fn    cu.Function
	ctas  int // CTAs per launch at most: all that are resident at once

	// Device buffers; every kernel parameter is 8 bytes (gorgonia copies 8 per parameter).
	weights, slots, words, flag cu.DevicePtr
	key                         uint64
	host                        []uint64 // read-back of words
}

func newFusedRunner(d *cudaDevice, w, depth, maxCTAs int) (*fusedRunner, error) {
	shape, err := cudakernel.PlanFused(w, depth, d.maxShared)
	if err != nil {
		return nil, err
	}
	mod, err := d.compile("fused.cu", cudakernel.FusedSource, shape.Defines())
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function("mlp_fused")
	if err != nil {
		return nil, fmt.Errorf("cuda: mlp_fused not in the module: %v", err)
	}
	if err := setMaxDynamicShared(fn, shape.SharedBytes()); err != nil {
		return nil, err
	}
	perSM, err := fn.MaxActiveBlocksPerMultiProcessor(shape.Threads(), int64(shape.SharedBytes()))
	if err != nil {
		return nil, fmt.Errorf("cuda: occupancy of %v: %v", shape, err)
	}
	if perSM < 1 {
		return nil, fmt.Errorf("cuda: %v does not fit on one multiprocessor (%d threads, %d bytes of shared memory, registers); use %s=%s",
			shape, shape.Threads(), shape.SharedBytes(), CUDAPathEnv, CUDAPathCuBLAS)
	}
	r := &fusedRunner{shape: shape, fn: fn, ctas: perSM * d.sms}
	if maxCTAs > 0 {
		r.ctas = min(r.ctas, maxCTAs)
	}
	nv := shape.Values()
	r.host = make([]uint64, cudakernel.Digits*nv)
	for _, b := range []struct {
		p    *cu.DevicePtr
		what string
		n    int64
	}{
		{&r.weights, "padded weights", int64(4 * depth * shape.WP * shape.WP)},
		{&r.slots, "CTA slots", int64(8 * r.ctas * shape.SlotWords())},
		{&r.words, "totals", int64(8 * len(r.host))},
		{&r.flag, "divergence flag", 8},
	} {
		if *b.p, err = alloc(b.what, b.n); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *fusedRunner) load(weights []float32, key [2]uint32) error {
	p := cudakernel.PadWeights(weights, r.shape.W, r.shape.D, r.shape.WP)
	if err := cu.MemcpyHtoD(r.weights, unsafe.Pointer(&p[0]), int64(4*len(p))); err != nil {
		return fmt.Errorf("cuda: uploading weights: %v", err)
	}
	r.key = cudakernel.PackKey(key)
	return nil
}

func (r *fusedRunner) run(first, end int64) ([]exact.Acc, error) {
	if err := clearTotals(r.words, r.flag, len(r.host)); err != nil {
		return nil, err
	}
	f, count := uint64(first), uint64(end-first)
	args := []unsafe.Pointer{
		unsafe.Pointer(&r.weights), unsafe.Pointer(&r.key), unsafe.Pointer(&f), unsafe.Pointer(&count),
		unsafe.Pointer(&r.slots), unsafe.Pointer(&r.words), unsafe.Pointer(&r.flag),
	}
	grid := r.shape.Grid(end-first, r.ctas)
	if err := r.fn.Launch(grid, 1, 1, r.shape.Threads(), 1, 1, r.shape.SharedBytes(), cu.NoStream, args); err != nil {
		return nil, fmt.Errorf("cuda: launching %v on %d CTAs: %v", r.shape, grid, err)
	}
	return readTotals(r.words, r.flag, r.host, r.shape.Values())
}
