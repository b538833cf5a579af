package gpuengine

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cpukernel"
	"github.com/whestbake/whestbake/gpuengine/internal/simdcap"
	"github.com/whestbake/whestbake/internal/hostinfo"
)

// CPUKernelEnv is the environment variable that caps, at start-up, the vector
// instruction set of the CPU engine's kernels: avx512, avx2 or generic, and
// unset the best the CPU has. It is for tests and benchmarks: on an AVX-512 machine,
// WHESTBAKE_CPU_KERNEL=avx2 runs what an AVX2-only host runs, with the same
// bits. Describe's Kernel names the kernel chosen.
const CPUKernelEnv = simdcap.Env

// CPU is the pure-Go engine: AVX2/FMA assembly on amd64, identical bits elsewhere.
type CPU struct{}

// Describe implements Engine.
func (CPU) Describe() Description {
	return Description{
		Engine:      "cpu",
		Device:      "cpu",
		DeviceName:  cpuBrand(),
		Kernel:      cpukernel.Impl(),
		MemoryBytes: hostinfo.MemTotalBytes(),
	}
}

// BakeMLP implements Engine.
func (CPU) BakeMLP(
	ctx context.Context,
	spec bakeapi.Spec,
	job Job,
	resume *Checkpoint,
	progress Progress,
) (Result, error) {
	if err := checkJob(spec, job); err != nil {
		return Result{}, err
	}
	if resume != nil {
		if resume.Algorithm != spec.Algorithm() {
			return Result{}, fmt.Errorf(
				"%w: it is for algorithm %q, this bake uses %q",
				ErrBadCheckpoint,
				resume.Algorithm,
				spec.Algorithm(),
			)
		}
		if resume.SamplesDone < 0 || resume.SamplesDone > spec.NSamples {
			return Result{}, fmt.Errorf(
				"%w: its position %d is outside [0, %d]",
				ErrBadCheckpoint,
				resume.SamplesDone,
				spec.NSamples,
			)
		}
	}
	if spec.Sampler == bakeapi.SamplerNumpy {
		return bakeNumpy(ctx, spec, job, resume, progress)
	}
	return bakePhilox(ctx, spec, job, resume, progress, nil)
}

// checkJob refuses a spec or job the CPU engines cannot bake.
func checkJob(spec bakeapi.Spec, job Job) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	if spec.Precision != bakeapi.PrecisionFP32 {
		return bakeapi.FieldErrors{{Field: bakeapi.FieldPrecision, Problem: fmt.Sprintf(
			"%q runs on the CUDA engine's tensor cores only: the CPU engines compute fp32 "+
				"(the default); choose the cuda device for %s",
			spec.Precision, spec.Precision)}}
	}
	if job.Threads < 0 {
		return fmt.Errorf("threads must be positive (or 0 for one), got %d", job.Threads)
	}
	return checkWeights(spec, job)
}

// checkWeights refuses a job whose weights are not depth·width² values:
// every engine's check, the CUDA engine's too.
func checkWeights(spec bakeapi.Spec, job Job) error {
	if want := spec.Depth * spec.Width * spec.Width; len(job.Weights) != want {
		return fmt.Errorf("weights hold %d values, want depth·width² = %d", len(job.Weights), want)
	}
	return nil
}

// forwardLayers runs relu(x @ W_l) for every layer of a block of rows, calling
// visit(l, y) after each layer; x and y are scratch buffers of rows·width.
// Rows are split across threads: each output row depends on its own input row
// only, so the split changes no bits.
func forwardLayers(
	spec bakeapi.Spec,
	threads int,
	weights []float32,
	x, y []float32,
	rows int,
	mode cpukernel.Mode,
	visit func(l int, act []float32),
) {
	w := spec.Width
	for l := 0; l < spec.Depth; l++ {
		layer := weights[l*w*w : (l+1)*w*w]
		forwardLayer(y[:rows*w], x[:rows*w], rows, w, layer, mode, max(1, threads))
		visit(l, y[:rows*w])
		x, y = y, x
	}
}

// forwardLayer is one layer of forwardLayers. With one thread it builds no
// closure: one that parallelRows may hand to goroutines lives on the heap,
// which would be an allocation per layer in a philox worker's loop.
func forwardLayer(y, x []float32, rows, w int, wl []float32, mode cpukernel.Mode, threads int) {
	if threads == 1 {
		cpukernel.Forward(y, x, rows, w, wl, mode)
		return
	}
	parallelRows(rows, threads, func(r0, r1 int) {
		cpukernel.Forward(y[r0*w:r1*w], x[r0*w:r1*w], r1-r0, w, wl, mode)
	})
}

// parallelRows calls f on contiguous row ranges covering [0, rows).
func parallelRows(rows, threads int, f func(r0, r1 int)) {
	if threads > rows/8 {
		threads = max(1, rows/8)
	}
	if threads == 1 {
		f(0, rows)
		return
	}
	var wg sync.WaitGroup
	per := (rows + threads - 1) / threads
	for r0 := 0; r0 < rows; r0 += per {
		r1 := min(rows, r0+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(r0, r1)
		}()
	}
	wg.Wait()
}

// DefaultThreads is the number of CPU threads a bake uses unless told otherwise.
func DefaultThreads() int { return runtime.GOMAXPROCS(0) }
