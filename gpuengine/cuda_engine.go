//go:build cuda

package gpuengine

import (
	"context"
	"fmt"
	"os"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// CUDA paths: all take their inputs from the philox sampler and combine tiles exactly.
const (
	// CUDAPathFused is mlp_fused: inputs, layers and statistics in one kernel,
	// bit-identical to the CPU twin. The default.
	CUDAPathFused = "fused"
	// CUDAPathCuBLAS runs every layer as a cublasSgemm on fixed-shape chunks; cuBLAS owns
	// the k order, so results are within ~1e-6 relative of the CPU twin, not identical.
	CUDAPathCuBLAS = "cublas"
	// CUDAPathReference is the cuBLAS pipeline with the GEMM replaced by the forward
	// contract's plain fma chain: slow, bit-identical, for isolating kernel faults.
	CUDAPathReference = "reference"
)

// CUDAPathEnv selects the path of the engine --device cuda opens (default fused).
const CUDAPathEnv = "WHESTBAKE_CUDA_PATH"

// openCUDA opens the CUDA engine on GPU 0 with the path from $WHESTBAKE_CUDA_PATH.
func openCUDA() (Engine, error) {
	return OpenCUDA(os.Getenv(CUDAPathEnv))
}

// OpenCUDA opens the CUDA engine on GPU 0 running path ("" means fused). Engines of
// one process share the device and take turns, one MLP at a time.
func OpenCUDA(path string) (Engine, error) {
	switch path {
	case "":
		path = CUDAPathFused
	case CUDAPathFused, CUDAPathCuBLAS, CUDAPathReference:
	default:
		return nil, fmt.Errorf("%s=%q unknown: use %s (default), %s or %s", CUDAPathEnv, path, CUDAPathFused, CUDAPathCuBLAS, CUDAPathReference)
	}
	dev, err := sharedDevice()
	if err != nil {
		return nil, err
	}
	return &cudaEngine{dev: dev, path: path, runners: map[runnerKey]cudaRunner{}}, nil
}

type cudaEngine struct {
	dev     *cudaDevice
	path    string
	maxCTAs int // fused path: CTAs per launch at most; 0 = as many as fit (tests lower it)
	runners map[runnerKey]cudaRunner
}

// cudaRunner computes one path's exact totals on the device thread.
type cudaRunner interface {
	// load takes the next MLP's weights (D·W·W, layer-major, row-major) and Philox key.
	load(weights []float32, key [2]uint32) error
	// run returns the exact totals of samples [first, end), first a multiple of the tile.
	run(first, end int64) ([]exact.Acc, error)
}

// runnerKey names a compiled, allocated runner: the network shape and, for the
// pipeline, its GEMM rows (which depend on the step).
type runnerKey struct {
	width, depth, rows int
}

// Describe implements Engine.
func (e *cudaEngine) Describe() Description {
	return Description{Engine: "cuda", Device: DeviceCUDA, DeviceName: e.dev.String(), Kernel: e.path, MemoryBytes: e.dev.totalMem}
}

// BakeMLP implements Engine: steps of cudakernel.Step(spec.ChunkSize) samples, a
// checkpoint after each, the same checkpoints as the CPU twin's (either engine can
// resume the other's).
func (e *cudaEngine) BakeMLP(ctx context.Context, spec bakeapi.Spec, job Job, resume *Checkpoint, progress Progress) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if spec.Sampler != bakeapi.SamplerPhilox {
		return Result{}, fmt.Errorf("--device cuda runs the philox sampler only; use --sampler philox or --device cpu")
	}
	w, d := spec.Width, spec.Depth
	if want := d * w * w; len(job.Weights) != want {
		return Result{}, fmt.Errorf("weights hold %d values, want depth·width² = %d", len(job.Weights), want)
	}
	total, done, err := philoxResume(spec, resume)
	if err != nil {
		return Result{}, err
	}
	step := cudakernel.Step(spec.ChunkSize)

	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	var r cudaRunner
	if err := e.dev.do(func() error {
		var err error
		if r, err = e.runner(w, d, step); err != nil {
			return err
		}
		return r.load(job.Weights, PhiloxKey(job))
	}); err != nil {
		return Result{}, err
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
			progress(philoxCheckpoint(total, d*w, done))
		}
	}
	return finishExact(total, d, w, spec.NSamples), nil
}

// runner returns the compiled runner of the engine's path for a W×D network and a
// step, building it on first use. Device thread only.
func (e *cudaEngine) runner(w, d int, step int64) (cudaRunner, error) {
	k := runnerKey{width: w, depth: d}
	var pipe cudakernel.PipelineShape
	if e.path != CUDAPathFused {
		pipe = cudakernel.PlanPipeline(w, d, step)
		k.rows = pipe.Rows
	}
	if r, ok := e.runners[k]; ok {
		return r, nil
	}
	var r cudaRunner
	var err error
	if e.path == CUDAPathFused {
		r, err = newFusedRunner(e.dev, w, d, e.maxCTAs)
	} else {
		r, err = newPipelineRunner(e.dev, pipe, e.path == CUDAPathCuBLAS)
	}
	if err != nil {
		return nil, err
	}
	e.runners[k] = r
	return r, nil
}

// philoxResume validates a philox checkpoint against spec and returns its exact totals
// and position (zero totals at 0 without one).
func philoxResume(spec bakeapi.Spec, resume *Checkpoint) (philoxSums, int64, error) {
	w, d := spec.Width, spec.Depth
	total := make(philoxSums, d*w+w)
	if resume == nil {
		return total, 0, nil
	}
	switch {
	case resume.Algorithm != spec.Algorithm():
		return nil, 0, fmt.Errorf("%w: it is for algorithm %q, this bake uses %q", ErrBadCheckpoint, resume.Algorithm, spec.Algorithm())
	case resume.SamplesDone < 0 || resume.SamplesDone > spec.NSamples:
		return nil, 0, fmt.Errorf("%w: its position %d is outside [0, %d]", ErrBadCheckpoint, resume.SamplesDone, spec.NSamples)
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
