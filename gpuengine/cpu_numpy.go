package gpuengine

import (
	"context"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cpukernel"
	"github.com/whestbake/whestbake/internal/seeds"
)

// NumpyChunk is whestbench's CPU chunk rule, _pick_chunk_size in simulation.py; it
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
	sum := columnSums(w, chunk)
	for done < spec.NSamples {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		n := int(min(int64(chunk), spec.NSamples-done))
		gen.FillStandardNormalF32(x[:n*w])
		forwardLayers(spec, job.Threads, job.Weights, x, y, n, mode, func(l int, act []float32) {
			part := sum(act, n, false)
			sums := layerSums[l*w : (l+1)*w]
			for j := range sums {
				sums[j] += part[j]
			}
			if l == d-1 {
				part = sum(act, n, true)
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

// columnSums returns the chunk's float64 column sums, of the squares when
// squares is set, as numpy's sum(axis=0) computes them on an (n, w) array:
// each column in row order for w ≥ 2, where the reduced axis is the outer
// loop; for w = 1 the column is one contiguous run, which numpy reduces
// with its pairwise summation of loops_utils.h.src. The returned slice is
// reused by the next call.
func columnSums(w, chunk int) func(act []float32, n int, squares bool) []float64 {
	part := make([]float64, w)
	var run []float64
	if w == 1 {
		run = make([]float64, chunk)
	}
	return func(act []float32, n int, squares bool) []float64 {
		if w == 1 {
			for i, v := range act[:n] {
				run[i] = float64(v)
				if squares {
					run[i] *= run[i]
				}
			}
			part[0] = pairwiseSum(run[:n])
			return part
		}
		clear(part)
		if squares {
			cpukernel.AddColumnSquares(part, act, n, w)
		} else {
			cpukernel.AddColumnSums(part, act, n, w)
		}
		return part
	}
}
