//go:build cuda

package gpuengine

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// launchShape is what a fused kernel's launch needs of its shape, a cudakernel.FusedShape
// or a cudakernel.TF32Shape.
type launchShape interface {
	Threads() int
	SharedBytes() int
	Values() int
	SlotWords() int
	Grid(count int64, maxCTAs int) int
	String() string
}

// fusedRunner launches a fused kernel, mlp_fused or mlp_tf32x3 for tf32x3, once per
// step: the inputs, every layer and the exact sums of the step's samples in one launch.
type fusedRunner struct {
	shape launchShape
	mod   *module
	fn    cu.Function
	ctas  int      // CTAs per launch at most: all that are resident at once
	notes []string // how the shape was chosen and the module built, for the startup log
	// layout is the weights as the kernel reads them, weightBytes their size.
	layout      func(weights []float32) []uint32
	weightBytes int64
	// tensorCores is mlp_tf32x3's bakeapi.TensorCores, "" for mlp_fused.
	tensorCores string

	// Device buffers; every kernel parameter is 8 bytes, as gorgonia copies 8 per parameter.
	weights, slots, words, flag buffer
	key                         uint64
	host                        []uint64 // read-back of words
}

// fusedKernel is one compiled plan of a fused kernel.
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
			return d.compileFused("fused.cu", cudakernel.FusedSource, "mlp_fused", s.Defines())
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
		layout: func(weights []float32) []uint32 {
			p := cudakernel.PadWeights(weights, shape.W, shape.D, shape.WP)
			return unsafe.Slice((*uint32)(unsafe.Pointer(&p[0])), len(p))
		},
		weightBytes: int64(4 * shape.D * shape.WP * shape.WP),
	}
	return r, r.start(d, maxCTAs)
}

// newTF32Runner builds mlp_tf32x3 for a W×D network, for --precision tf32x3: the first of
// cudakernel.TF32Plans that compiles without local memory.
func newTF32Runner(d *cudaDevice, w, depth, maxCTAs int) (*fusedRunner, error) {
	plans, err := cudakernel.TF32Plans(w, depth, d.maxShared)
	if err != nil {
		return nil, err
	}
	shape, k, notes, err := cudakernel.ChooseFused(
		plans,
		func(s cudakernel.TF32Shape) (fusedKernel, string, error) {
			return d.compileFused("tf32x3.cu", cudakernel.TF32x3Source, "mlp_tf32x3", s.Defines())
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
		layout: func(weights []float32) []uint32 {
			return cudakernel.PackTF32Weights(weights, shape.W, shape.D, shape.WP)
		},
		weightBytes: int64(8 * shape.D * shape.WP * shape.WP),
		tensorCores: bakeapi.TensorCores{
			GPU:    d.name,
			Arch:   fmt.Sprintf("sm_%d%d", d.major, d.minor),
			Driver: fmt.Sprintf("%d.%d", d.driver/1000, d.driver%1000/10),
			NVRTC:  fmt.Sprintf("%d.%d", d.nvrtcMajor, d.nvrtcMinor),
			Scheme: cudakernel.TF32x3Scheme,
			Kernel: k.mod.sum,
		}.String(),
	}
	return r, r.start(d, maxCTAs)
}

// start sets up a runner built by a constructor, freeing it on failure.
func (r *fusedRunner) start(d *cudaDevice, maxCTAs int) error {
	if err := r.setup(d, maxCTAs); err != nil {
		return errors.Join(err, r.free())
	}
	return nil
}

// compileFused compiles one fused kernel and describes its local memory use, "" for
// none: from ptxas's report of a cubin, or from the loaded function's attributes after
// the PTX fallback, since the driver's JIT reports nothing else.
func (d *cudaDevice) compileFused(file, source, entry string, defines []string) (fusedKernel, string, error) {
	mod, err := d.compile(file, source, defines)
	if err != nil {
		return fusedKernel{}, "", err
	}
	fn, err := mod.mod.Function(entry)
	if err != nil {
		return fusedKernel{}, "", errors.Join(
			fmt.Errorf("cuda: %s not in the module: %v", entry, err),
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
			fmt.Errorf("cuda: local memory of %s: %v", entry, err),
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
		{&r.weights, "weights", r.weightBytes},
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
	for entry, res := range r.mod.report {
		r.notes = append(r.notes, fmt.Sprintf("%s: %v", entry, res))
	}
	if r.tensorCores != "" {
		r.notes = append(r.notes, r.tensorCores)
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

// identity is the runner's bakeapi.TensorCores, "" for mlp_fused.
func (r *fusedRunner) identity() string { return r.tensorCores }

func (r *fusedRunner) load(weights []float32, key [2]uint32) error {
	p := r.layout(weights)
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
