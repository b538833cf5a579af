//go:build cuda

package gpuengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// openCUDA opens the CUDA engine on GPU 0 with the path from $WHESTBAKE_CUDA_PATH.
func openCUDA() (Engine, error) {
	return OpenCUDA(os.Getenv(CUDAPathEnv))
}

// OpenCUDA opens the CUDA engine on GPU 0 running path, "" meaning fused. Engines of
// one process share the device and take turns, one MLP at a time. Close releases the
// engine's modules and device memory, and the device with the last engine.
func OpenCUDA(path string) (Engine, error) {
	switch path {
	case "":
		path = CUDAPathFused
	case CUDAPathFused, CUDAPathCuBLAS, CUDAPathReference:
	default:
		return nil, fmt.Errorf(
			"%s=%q unknown: use %s (default), %s or %s",
			CUDAPathEnv,
			path,
			CUDAPathFused,
			CUDAPathCuBLAS,
			CUDAPathReference,
		)
	}
	dev, err := acquireDevice()
	if err != nil {
		return nil, err
	}
	return &cudaEngine{dev: dev, path: path, runners: newRunnerCache[cudaRunner](maxRunners)}, nil
}

type cudaEngine struct {
	dev     *cudaDevice
	path    string
	maxCTAs int // fused path: CTAs per launch at most; 0 = as many as fit; tests lower it
	// tiling replaces the fused path's own plans with one shape. The tiling benchmark
	// sets it; no shape changes a bit, so only speed can differ.
	tiling  *cudakernel.FusedShape
	runners *runnerCache[cudaRunner]
	closed  bool
}

// cudaRunner computes one path's exact totals on the device thread.
type cudaRunner interface {
	// load takes the next MLP's weights, D·W·W layer-major then row-major, and Philox key.
	load(weights []float32, key [2]uint32) error
	// run returns the exact totals of samples [first, end), first a multiple of the tile.
	run(first, end int64) ([]exact.Acc, error)
	// free releases the runner's device resources.
	free() error
	// log describes how the runner was built: target, registers, fallbacks.
	log() []string
	// identity is the runner's bakeapi.TensorCores for tf32x3, "" for fp32.
	identity() string
}

// Close frees the engine's runners and releases its hold on the device. The engine
// must not be used afterwards.
func (e *cudaEngine) Close() error {
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return errors.Join(e.dev.do(e.runners.close), releaseDevice())
}

// maxRunners bounds the runners one engine keeps. A runner holds a module and device
// buffers, and the pipeline's two activation buffers are 256 MiB each; a worker that bakes
// several shapes, or whose chunk size varies, would otherwise keep every one it ever
// built. Four covers a bake's shape plus the bench's and calibration's.
const maxRunners = 4

// CUDAHoldings is what the CUDA engines of this process hold on the device now.
func CUDAHoldings() Holdings { return cudaHoldings.snapshot() }

// Describe implements Engine.
func (e *cudaEngine) Describe() Description {
	return Description{
		Engine:      "cuda",
		Device:      DeviceCUDA,
		DeviceName:  e.dev.String(),
		Kernel:      e.path,
		Driver:      e.dev.cudaVersion(),
		MemoryBytes: e.dev.totalMem,
	}
}

// describeFor implements DescribeFor: a tf32x3 bake's Kernel is its runner's
// bakeapi.TensorCores, built here for spec's shape.
func (e *cudaEngine) describeFor(spec bakeapi.Spec) (Description, error) {
	d := e.Describe()
	if spec.Precision != bakeapi.PrecisionTF32x3 {
		return d, nil
	}
	if err := e.checkPrecision(spec); err != nil {
		return Description{}, err
	}
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if e.closed {
		return Description{}, errors.New("cuda: the engine is closed")
	}
	err := e.dev.do(func() error {
		r, err := e.runner(spec.Width, spec.Depth, cudakernel.Step(spec.ChunkSize), spec.Precision)
		if err == nil {
			d.Kernel = r.identity()
		}
		return err
	})
	return d, err
}

// checkPrecision refuses a precision the engine's path does not compute.
func (e *cudaEngine) checkPrecision(spec bakeapi.Spec) error {
	if spec.Precision == bakeapi.PrecisionTF32x3 && e.path != CUDAPathFused {
		return bakeapi.FieldErrors{{Field: bakeapi.FieldPrecision, Problem: fmt.Sprintf(
			"%q runs on the fused path only; %s=%s computes fp32",
			spec.Precision, CUDAPathEnv, e.path)}}
	}
	return nil
}

// BakeMLP implements Engine: steps of cudakernel.Step(spec.ChunkSize) samples, a
// checkpoint after each, the same checkpoints as the CPU twin's, so either engine can
// resume the other's.
func (e *cudaEngine) BakeMLP(
	ctx context.Context,
	spec bakeapi.Spec,
	job Job,
	resume *Checkpoint,
	progress Progress,
) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if spec.Sampler != bakeapi.SamplerPhilox {
		return Result{}, deviceErr(
			"cuda runs the philox sampler only; use the philox sampler or the cpu device",
		)
	}
	if err := checkWeights(spec, job); err != nil {
		return Result{}, err
	}
	if err := e.checkPrecision(spec); err != nil {
		return Result{}, err
	}
	w, d := spec.Width, spec.Depth
	total, done, err := philoxResume(spec, resume)
	if err != nil {
		return Result{}, err
	}
	step := cudakernel.Step(spec.ChunkSize)

	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if e.closed { // its device thread may be gone with the last engine
		return Result{}, errors.New("cuda: the engine is closed")
	}
	var r cudaRunner
	if err := e.dev.do(func() error {
		var err error
		if r, err = e.runner(w, d, step, spec.Precision); err != nil {
			return err
		}
		return r.load(job.Weights, PhiloxKey(job))
	}); err != nil {
		return Result{}, err
	}
	if resume != nil && resume.Kernel != r.identity() {
		return Result{}, fmt.Errorf(
			"%w: it was computed by %q, this engine is %q: a tf32x3 bake resumes only on the "+
				"same GPU, architecture, driver, NVRTC and kernel",
			ErrBadCheckpoint,
			resume.Kernel,
			r.identity(),
		)
	}
	for done < spec.NSamples {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		end := min(spec.NSamples, done+step)
		var part []exact.Acc
		if err := e.dev.do(func() error {
			var err error
			part, err = r.run(done, end)
			return err
		}); err != nil {
			return Result{}, err
		}
		total.add(part)
		done = end
		if progress != nil {
			cp := philoxCheckpoint(total, d*w, done)
			cp.Algorithm, cp.Kernel = spec.Algorithm(), r.identity()
			progress(cp)
		}
	}
	return finishExact(total, d, w, spec.NSamples), nil
}

// runner returns the compiled runner of the engine's path for a W×D network, a step and
// a precision, building it on first use and logging how it was built. Device thread
// only.
func (e *cudaEngine) runner(w, d int, step int64, p bakeapi.Precision) (cudaRunner, error) {
	k := runnerKey{width: w, depth: d, precision: p}
	var pipe cudakernel.PipelineShape
	if e.path != CUDAPathFused {
		pipe = cudakernel.PlanPipeline(w, d, step)
		k.rows = pipe.Rows
	}
	if r, ok := e.runners.get(k); ok {
		return r, nil
	}
	var r cudaRunner
	var err error
	switch {
	case p == bakeapi.PrecisionTF32x3:
		r, err = newTF32Runner(e.dev, w, d, e.maxCTAs)
	case e.path == CUDAPathFused:
		r, err = newFusedRunner(e.dev, w, d, e.maxCTAs, e.tiling)
	default:
		r, err = newPipelineRunner(e.dev, pipe, e.path == CUDAPathCuBLAS)
	}
	if err != nil {
		return nil, err
	}
	for _, line := range r.log() {
		slog.Info("cuda: "+line, "device", e.dev.name)
	}
	return r, e.runners.put(k, r)
}

// philoxResume validates a philox checkpoint against spec and returns its exact totals
// and position, zero totals at 0 without one.
func philoxResume(spec bakeapi.Spec, resume *Checkpoint) (philoxSums, int64, error) {
	w, d := spec.Width, spec.Depth
	total := make(philoxSums, d*w+w)
	if resume == nil {
		return total, 0, nil
	}
	switch {
	case resume.Algorithm != spec.Algorithm():
		return nil, 0, fmt.Errorf(
			"%w: it is for algorithm %q, this bake uses %q",
			ErrBadCheckpoint,
			resume.Algorithm,
			spec.Algorithm(),
		)
	case resume.SamplesDone < 0 || resume.SamplesDone > spec.NSamples:
		return nil, 0, fmt.Errorf(
			"%w: its position %d is outside [0, %d]",
			ErrBadCheckpoint,
			resume.SamplesDone,
			spec.NSamples,
		)
	case len(resume.LayerExact) != d*w || len(resume.SquareExact) != w ||
		(resume.SamplesDone%PhiloxTile != 0 && resume.SamplesDone != spec.NSamples):
		return nil, 0, ErrBadCheckpoint
	}
	for i, s := range append(append([]string{}, resume.LayerExact...), resume.SquareExact...) {
		a, err := exact.Parse(s)
		if err != nil {
			return nil, 0, fmt.Errorf("%w (%v)", ErrBadCheckpoint, err)
		}
		total[i] = a
	}
	return total, resume.SamplesDone, nil
}
