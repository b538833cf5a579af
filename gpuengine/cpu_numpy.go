package gpuengine

import (
	"context"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cpukernel"
	"github.com/whestbake/whestbake/internal/seeds"
)

// NumpyChunk is whestbench's CPU chunk rule (simulation.py _pick_chunk_size); it
// fixes the float64 summation order, so it is part of the numpy contract.
func NumpyChunk(width int) int {
	return max(1024, min(16384, (1<<20)/width))
}

// bakeNumpy reproduces whestbench's sample_layer_statistics: one PCG64 stream of
// float32 normals, per chunk relu(x @ W) per layer, chunk column sums in row
// order added to running float64 sums.
func bakeNumpy(
	ctx context.Context,
	spec bakeapi.Spec,
	job Job,
	resume *Checkpoint,
	progress Progress,
) (Result, error) {
	w, d := spec.Width, spec.Depth
	mode := cpukernel.FMA
	if spec.Dot == bakeapi.DotMulAdd {
		mode = cpukernel.MulAdd
	}
	gen := seeds.NewPCG64(job.Sample)
	layerSums := make([]float64, d*w)
	sumSq := make([]float64, w)
	var done int64
	if resume != nil {
		if resume.PCG64 == nil || len(resume.LayerSums) != d*w || len(resume.SumSquares) != w {
			return Result{}, ErrBadCheckpoint
		}
		gen.SetState(*resume.PCG64)
		copy(layerSums, resume.LayerSums)
		copy(sumSq, resume.SumSquares)
		done = resume.SamplesDone
	}
	chunk := NumpyChunk(w)
	x := make([]float32, chunk*w)
	y := make([]float32, chunk*w)
	part := make([]float64, w)
	for done < spec.NSamples {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		n := int(min(int64(chunk), spec.NSamples-done))
		gen.FillStandardNormalF32(x[:n*w])
		forwardLayers(spec, job.Threads, job.Weights, x, y, n, mode, func(l int, act []float32) {
			clear(part)
			cpukernel.AddColumnSums(part, act, n, w)
			sums := layerSums[l*w : (l+1)*w]
			for j := range sums {
				sums[j] += part[j]
			}
			if l == d-1 {
				clear(part)
				cpukernel.AddColumnSquares(part, act, n, w)
				for j := range sumSq {
					sumSq[j] += part[j]
				}
			}
		})
		done += int64(n)
		if progress != nil {
			st := gen.State()
			progress(Checkpoint{
				Algorithm:   bakeapi.NumpyAlgorithm,
				SamplesDone: done,
				LayerSums:   layerSums,
				SumSquares:  sumSq,
				PCG64:       &st,
			})
		}
	}
	return finish(layerSums, sumSq, spec.NSamples, w), nil
}
