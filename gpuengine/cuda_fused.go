//go:build cuda

package gpuengine

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// fusedRunner launches mlp_fused (internal/cudakernel/fused.cu) once per step.
type fusedRunner struct {
	shape cudakernel.FusedShape
	mod   *module
	fn    cu.Function
	ctas  int      // CTAs per launch at most: all that are resident at once
	notes []string // how the shape was chosen and the module built, for the startup log

	// Device buffers; every kernel parameter is 8 bytes (gorgonia copies 8 per parameter).
	weights, slots, words, flag buffer
	key                         uint64
	host                        []uint64 // read-back of words
}

// fusedKernel is one compiled plan of mlp_fused.
type fusedKernel struct {
	mod *module
	fn  cu.Function
}

func newFusedRunner(
	d *cudaDevice,
	w, depth, maxCTAs int,
	tiling *cudakernel.FusedShape,
) (*fusedRunner, error) {
	plans, err := cudakernel.FusedPlans(w, depth, d.maxShared)
	if err != nil {
		return nil, err
	}
	if tiling != nil {
		if tiling.W != w || tiling.D != depth {
			return nil, fmt.Errorf("cuda: tiling %v is not for a %d×%d network", *tiling, w, depth)
		}
		if err := tiling.Validate(d.maxShared); err != nil {
			return nil, err
		}
		plans = []cudakernel.FusedShape{*tiling}
	}
	shape, k, notes, err := cudakernel.ChooseFused(
		plans,
		func(s cudakernel.FusedShape) (fusedKernel, string, error) {
			return d.compileFused(s)
		},
		func(k fusedKernel) { _ = k.mod.unload() },
	)
	if err != nil {
		return nil, err
	}
	r := &fusedRunner{
		shape: shape,
		mod:   k.mod,
		fn:    k.fn,
		notes: append(notes, k.mod.notes...),
	}
	if err := r.setup(d, maxCTAs); err != nil {
		return nil, errors.Join(err, r.free())
	}
	return r, nil
}

// compileFused compiles one plan and describes its local memory use ("" for none):
// from ptxas's report of a cubin, or from the loaded function's attributes after the
// PTX fallback (the driver's JIT reports nothing else).
func (d *cudaDevice) compileFused(s cudakernel.FusedShape) (fusedKernel, string, error) {
	mod, err := d.compile("fused.cu", cudakernel.FusedSource, s.Defines())
	if err != nil {
		return fusedKernel{}, "", err
	}
	fn, err := mod.mod.Function("mlp_fused")
	if err != nil {
		return fusedKernel{}, "", errors.Join(
			fmt.Errorf("cuda: mlp_fused not in the module: %v", err),
			mod.unload(),
		)
	}
	k := fusedKernel{mod, fn}
	if mod.report != nil {
		if local := mod.report.Local(); len(local) > 0 {
			return k, fmt.Sprintf("%s: %v", strings.Join(local, ", "), mod.report[local[0]]), nil
		}
		return k, "", nil
	}
	lmem, err := fn.Attribute(cu.LocalSizeBytes)
	if err != nil {
		return fusedKernel{}, "", errors.Join(
			fmt.Errorf("cuda: local memory of mlp_fused: %v", err),
			mod.unload(),
		)
	}
	if lmem > 0 {
		return k, fmt.Sprintf("%d bytes of local memory per thread", lmem), nil
	}
	return k, "", nil
}

func (r *fusedRunner) setup(d *cudaDevice, maxCTAs int) error {
	shape := r.shape
	if err := setMaxDynamicShared(r.fn, shape.SharedBytes()); err != nil {
		return err
	}
	perSM, err := r.fn.MaxActiveBlocksPerMultiProcessor(shape.Threads(), int64(shape.SharedBytes()))
	if err != nil {
		return fmt.Errorf("cuda: occupancy of %v: %v", shape, err)
	}
	if perSM < 1 {
		return fmt.Errorf(
			"cuda: %v does not fit on one multiprocessor "+
				"(%d threads, %d bytes of shared memory, registers); use %s=%s",
			shape,
			shape.Threads(),
			shape.SharedBytes(),
			CUDAPathEnv,
			CUDAPathCuBLAS,
		)
	}
	r.ctas = perSM * d.sms
	if maxCTAs > 0 {
		r.ctas = min(r.ctas, maxCTAs)
	}
	nv := shape.Values()
	r.host = make([]uint64, cudakernel.Digits*nv)
	for _, b := range []struct {
		buf  *buffer
		what string
		size int64
	}{
		{&r.weights, "padded weights", int64(4 * shape.D * shape.WP * shape.WP)},
		{&r.slots, "CTA slots", int64(8 * r.ctas * shape.SlotWords())},
		{&r.words, "totals", int64(8 * len(r.host))},
		{&r.flag, "divergence flag", 8},
	} {
		if *b.buf, err = alloc(b.what, b.size); err != nil {
			return err
		}
	}
	note := fmt.Sprintf(
		"%v: %s, %d CTAs of %d threads, %d bytes of shared memory",
		shape,
		r.mod.target,
		r.ctas,
		shape.Threads(),
		shape.SharedBytes(),
	)
	r.notes = append(r.notes, note)
	if res, ok := r.mod.report["mlp_fused"]; ok {
		r.notes = append(r.notes, fmt.Sprintf("mlp_fused: %v", res))
	}
	return nil
}

// free releases the runner's buffers and module. Device thread only.
func (r *fusedRunner) free() error {
	err := freeBuffers(r.weights, r.slots, r.words, r.flag)
	r.weights = buffer{}
	r.slots = buffer{}
	r.words = buffer{}
	r.flag = buffer{}
	if r.mod != nil {
		err = errors.Join(err, r.mod.unload())
		r.mod = nil
	}
	return err
}

// log lines describe how the runner was built.
func (r *fusedRunner) log() []string { return r.notes }

func (r *fusedRunner) load(weights []float32, key [2]uint32) error {
	p := cudakernel.PadWeights(weights, r.shape.W, r.shape.D, r.shape.WP)
	if err := cu.MemcpyHtoD(r.weights.ptr, unsafe.Pointer(&p[0]), int64(4*len(p))); err != nil {
		return fmt.Errorf("cuda: uploading weights: %v", err)
	}
	r.key = cudakernel.PackKey(key)
	return nil
}

func (r *fusedRunner) run(first, end int64) ([]exact.Acc, error) {
	if err := clearTotals(r.words.ptr, r.flag.ptr, len(r.host)); err != nil {
		return nil, err
	}
	f, count := uint64(first), uint64(end-first)
	args := []unsafe.Pointer{
		unsafe.Pointer(&r.weights.ptr),
		unsafe.Pointer(&r.key),
		unsafe.Pointer(&f),
		unsafe.Pointer(&count),
		unsafe.Pointer(&r.slots.ptr),
		unsafe.Pointer(&r.words.ptr),
		unsafe.Pointer(&r.flag.ptr),
	}
	grid := r.shape.Grid(end-first, r.ctas)
	threads := r.shape.Threads()
	shared := r.shape.SharedBytes()
	if err := r.fn.Launch(grid, 1, 1, threads, 1, 1, shared, cu.NoStream, args); err != nil {
		return nil, fmt.Errorf("cuda: launching %v on %d CTAs: %v", r.shape, grid, err)
	}
	return readTotals(r.words.ptr, r.flag.ptr, r.host, r.shape.Values())
}
