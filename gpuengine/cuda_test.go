//go:build cuda

package gpuengine

// GPU tests: run on a machine with a GPU, `go test -tags cuda ./gpuengine/` (docs/GPU.md).
// The CPU twin is the truth: docs/ALGORITHM.md's philox algorithm, itself checked against
// published Philox vectors and analytic statistics. The fused and reference paths must
// give its exact integer totals; the cuBLAS path must be close.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
)

func cudaEngineFor(t testing.TB, path string) *cudaEngine {
	t.Helper()
	e, err := OpenCUDA(path)
	if err != nil {
		t.Fatal(err)
	}
	return e.(*cudaEngine)
}

// bakeTotals bakes and returns the result and the exact totals of the last checkpoint.
func bakeTotals(t testing.TB, e Engine, spec bakeapi.Spec, j Job) (Result, []string) {
	t.Helper()
	var last []string
	res, err := e.BakeMLP(context.Background(), spec, j, nil, func(cp Checkpoint) {
		last = append(append([]string{}, cp.LayerExact...), cp.SquareExact...)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, last
}

// Widths off every tiling, ragged N, depth 1 and 8, and the production shape. make
// cuda-check compiles the kernels for each network without a GPU; a new one goes into
// the networks of gpuengine/internal/cudacheck too.
var cudaShapes = []struct {
	w, d int
	n    int64
}{
	{256, 8, 4096 + 17},
	{256, 2, 100_003},
	{64, 3, 5003},
	{17, 2, 777},
	{8, 3, 1000},
	{100, 4, 3001},
	{1, 1, 95},
	{512, 2, 2000},
	{1000, 1, 300},
}

// Subtests are named PATH/W<w>_D<d>, so one shape runs alone (the acceptance run's
// sanitizer steps take -test.run 'TestCUDABitIdenticalToCPUTwin/^fused$/^W256_D8$').
func TestCUDABitIdenticalToCPUTwin(t *testing.T) {
	for _, path := range []string{CUDAPathFused, CUDAPathReference} {
		t.Run(path, func(t *testing.T) {
			e := cudaEngineFor(t, path)
			for i, c := range cudaShapes {
				t.Run(fmt.Sprintf("W%d_D%d", c.w, c.d), func(t *testing.T) {
					j := job(t, uint64(100+i), c.w, c.d)
					spec := bakeapi.Spec{
						Width:    c.w,
						Depth:    c.d,
						NSamples: c.n,
						Sampler:  bakeapi.SamplerPhilox,
					}
					want, wantTotals := bakeTotals(t, CPU{}, spec, j)
					got, gotTotals := bakeTotals(t, e, spec, j)
					for k := range wantTotals {
						if gotTotals[k] != wantTotals[k] {
							t.Fatalf(
								"N=%d: exact total %d = %s, CPU twin %s",
								c.n,
								k,
								gotTotals[k],
								wantTotals[k],
							)
						}
					}
					if !sameResult(got, want) {
						t.Fatalf("N=%d: result differs from the CPU twin", c.n)
					}
				})
			}
		})
	}
}

// Chunk size (samples per launch and checkpoint) and grid size are scheduling only.
func TestCUDAInvariantToChunksAndGrid(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathFused)
	j := job(t, 7, 64, 3)
	base := bakeapi.Spec{
		Width:    64,
		Depth:    3,
		NSamples: 50_001,
		Sampler:  bakeapi.SamplerPhilox,
	}
	ref, _ := bakeTotals(t, e, base, j)
	for _, ctas := range []int{1, 3, 0} {
		g := &cudaEngine{
			dev:     e.dev,
			path:    CUDAPathFused,
			maxCTAs: ctas,
			runners: newRunnerCache[cudaRunner](maxRunners),
		}
		for _, chunk := range []int{32, 96, 1000, 1 << 20} {
			s := base
			s.ChunkSize = chunk
			if got, _ := bakeTotals(t, g, s, j); !sameResult(got, ref) {
				t.Fatalf("chunk %d, at most %d CTAs: result changed", chunk, ctas)
			}
		}
	}
}

// Checkpoints are the CPU twin's: a bake stopped on one engine resumes on either.
func TestCUDAResumeAcrossEngines(t *testing.T) {
	gpu := cudaEngineFor(t, CUDAPathFused)
	spec := bakeapi.Spec{
		Width:     32,
		Depth:     4,
		NSamples:  10_000,
		Sampler:   bakeapi.SamplerPhilox,
		ChunkSize: 640,
	}
	j := job(t, 4242, spec.Width, spec.Depth)
	ref := bake(t, spec, j)
	for _, pair := range []struct{ first, second Engine }{{gpu, gpu}, {gpu, CPU{}}, {CPU{}, gpu}} {
		for _, stopAfter := range []int{1, 4, 9} {
			ctx, cancel := context.WithCancel(context.Background())
			var last *Checkpoint
			calls := 0
			_, err := pair.first.BakeMLP(ctx, spec, j, nil, func(cp Checkpoint) {
				c := cp
				c.LayerExact = append([]string(nil), cp.LayerExact...)
				c.SquareExact = append([]string(nil), cp.SquareExact...)
				last = &c
				if calls++; calls == stopAfter {
					cancel()
				}
			})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("stop after %d: err = %v, want context.Canceled", stopAfter, err)
			}
			res, err := pair.second.BakeMLP(context.Background(), spec, j, last, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !sameResult(res, ref) {
				t.Fatalf(
					"%T → %T, resumed at %d: result changed",
					pair.first,
					pair.second,
					last.SamplesDone,
				)
			}
		}
	}
}

// cuBLAS owns its k order: each mean within 1e-6 of the CPU twin's, relative to the
// layer's largest mean (means near zero have no relative scale of their own).
func TestCUDACuBLASCloseToCPUTwin(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathCuBLAS)
	for i, c := range cudaShapes {
		j := job(t, uint64(200+i), c.w, c.d)
		spec := bakeapi.Spec{
			Width:    c.w,
			Depth:    c.d,
			NSamples: c.n,
			Sampler:  bakeapi.SamplerPhilox,
		}
		want := bake(t, spec, j)
		got, _ := bakeTotals(t, e, spec, j)
		for l := 0; l < c.d; l++ {
			row := want.LayerMeans[l*c.w : (l+1)*c.w]
			scale := 0.0
			for _, m := range row {
				scale = math.Max(scale, math.Abs(float64(m)))
			}
			for k, m := range row {
				if d := math.Abs(float64(got.LayerMeans[l*c.w+k] - m)); d > 1e-6*scale {
					t.Errorf(
						"cublas W=%d D=%d: layer %d neuron %d: %v, CPU twin %v",
						c.w,
						c.d,
						l,
						k,
						got.LayerMeans[l*c.w+k],
						m,
					)
				}
			}
		}
		if d := math.Abs(got.AvgVariance - want.AvgVariance); d > 1e-5*math.Abs(want.AvgVariance) {
			t.Errorf(
				"cublas W=%d D=%d: avg_variance %v, CPU twin %v",
				c.w,
				c.d,
				got.AvgVariance,
				want.AvgVariance,
			)
		}
	}
}

func TestCUDADivergenceIsAnError(t *testing.T) {
	for _, path := range []string{CUDAPathFused, CUDAPathCuBLAS} {
		e := cudaEngineFor(t, path)
		j := job(t, 1, 8, 2)
		for i := range j.Weights {
			j.Weights[i] = 1e30
		}
		_, err := e.BakeMLP(
			context.Background(),
			bakeapi.Spec{
				Width:    8,
				Depth:    2,
				NSamples: 64,
				Sampler:  bakeapi.SamplerPhilox,
			},
			j,
			nil,
			nil,
		)
		if !errors.Is(err, errDiverged) {
			t.Errorf("%s: err = %v, want the divergence error", path, err)
		}
	}
}

func TestCUDARefusesNumpyAndBadCheckpoints(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathFused)
	j := job(t, 1, 8, 2)
	numpy := bakeapi.Spec{
		Width:    8,
		Depth:    2,
		NSamples: 64,
		Sampler:  bakeapi.SamplerNumpy,
		Dot:      bakeapi.DotFMA,
	}
	if _, err := e.BakeMLP(context.Background(), numpy, j, nil, nil); err == nil {
		t.Error("the numpy sampler was accepted")
	}
	spec := bakeapi.Spec{
		Width:    8,
		Depth:    2,
		NSamples: 64,
		Sampler:  bakeapi.SamplerPhilox,
	}
	bad := &Checkpoint{
		Algorithm:   bakeapi.PhiloxAlgorithm,
		SamplesDone: 33,
		LayerExact:  make([]string, 16),
		SquareExact: make([]string, 8),
	}
	_, err := e.BakeMLP(context.Background(), spec, j, bad, nil)
	if !errors.Is(err, ErrBadCheckpoint) {
		t.Errorf("misaligned checkpoint: err = %v", err)
	}
	if d := e.Describe(); d.Device != DeviceCUDA || d.DeviceName == "" {
		t.Errorf("Describe() = %+v", d)
	}
}

// The production kernel must keep its 8×16 fragment in registers: a spill to local
// memory would cost far more than the ~5% issue overhead the design budgets.
func TestCUDAFusedResources(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathFused)
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if err := e.dev.do(func() error {
		r, err := e.runner(256, 8, cudakernel.DefaultStep, bakeapi.PrecisionFP32)
		if err != nil {
			return err
		}
		f := r.(*fusedRunner)
		regs, err := f.fn.Attribute(cu.NumRegs)
		if err != nil {
			return err
		}
		local, err := f.fn.Attribute(cu.LocalSizeBytes)
		if err != nil {
			return err
		}
		t.Logf(
			"%v: %d registers/thread, %d bytes local memory, %d threads, %d bytes shared, "+
				"%d CTAs resident",
			f.shape,
			regs,
			local,
			f.shape.Threads(),
			f.shape.SharedBytes(),
			f.ctas,
		)
		for _, line := range f.log() {
			t.Logf("startup log: %s", line) // target (cubin or PTX), ptxas's report, any fallback
		}
		if local > 0 {
			t.Errorf("%v spills %d bytes per thread to local memory", f.shape, local)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A worker whose chunk size varies builds a pipeline runner per step shape: the engine
// keeps at most maxRunners of them, and Close gives back every module, buffer and
// cuBLAS handle it held (the host-side accounting, CUDAHoldings, says so).
func TestCUDACloseReleasesEverything(t *testing.T) {
	before := CUDAHoldings()
	e := cudaEngineFor(t, CUDAPathCuBLAS)
	j := job(t, 5, 64, 2)
	for _, chunk := range []int{64, 96, 128, 160, 192, 224} {
		bakeTotals(
			t,
			e,
			bakeapi.Spec{
				Width:     64,
				Depth:     2,
				NSamples:  1000,
				Sampler:   bakeapi.SamplerPhilox,
				ChunkSize: chunk,
			},
			j,
		)
	}
	held := CUDAHoldings()
	t.Logf("before %+v, after six step shapes %+v", before, held)
	if held.Modules-before.Modules != maxRunners || held.Handles-before.Handles != maxRunners {
		t.Errorf("six step shapes hold %d modules and %d cuBLAS handles, want the cache's bound %d",
			held.Modules-before.Modules, held.Handles-before.Handles, maxRunners)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if after := CUDAHoldings(); after != before {
		t.Errorf("after Close: %+v, want %+v", after, before)
	}
	if _, err := e.BakeMLP(
		context.Background(),
		bakeapi.Spec{
			Width:    64,
			Depth:    2,
			NSamples: 64,
			Sampler:  bakeapi.SamplerPhilox,
		},
		j,
		nil,
		nil,
	); err == nil {
		t.Error("a closed engine baked")
	}
}

// go test -tags cuda -run XXX -bench CUDA ./gpuengine/ — effective TFLOP/s count 2·W²·D per sample.
func BenchmarkCUDAFused256x8(b *testing.B)  { benchCUDA(b, CUDAPathFused) }
func BenchmarkCUDACuBLAS256x8(b *testing.B) { benchCUDA(b, CUDAPathCuBLAS) }

func benchCUDA(b *testing.B, path string) {
	e := cudaEngineFor(b, path)
	j := job(b, 1, 256, 8)
	spec := bakeapi.Spec{
		Width:    256,
		Depth:    8,
		NSamples: 1 << 24,
		Sampler:  bakeapi.SamplerPhilox,
	}
	warmUp := bakeapi.Spec{
		Width:    256,
		Depth:    8,
		NSamples: 1 << 16,
		Sampler:  bakeapi.SamplerPhilox,
	}
	bakeTotals(b, e, warmUp, j) // compile, upload
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bakeTotals(b, e, spec, j)
	}
	perSec := float64(spec.NSamples) * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(perSec, "samples/s")
	b.ReportMetric(perSec*2*256*256*8/1e12, "TFLOP/s")
}

// Tilings set the speed and never a bit: each of cudakernel.TilingCandidates bakes the
// network's samples and must give PlanFused's result exactly, at 256×8 and at 64×4
// (subtests W<w>_D<d>/<shape>). The acceptance run times them with -test.bench
// CUDAFusedTilings -test.benchtime 1x; a small bake before the timer compiles each.
func BenchmarkCUDAFusedTilings(b *testing.B) {
	base := cudaEngineFor(b, CUDAPathFused)
	defer base.Close()
	for _, net := range []struct {
		w, d int
		n    int64
	}{{256, 8, 1 << 24}, {64, 4, 1 << 27}} {
		b.Run(fmt.Sprintf("W%d_D%d", net.w, net.d), func(b *testing.B) {
			benchTilings(b, base, net.w, net.d, net.n)
		})
	}
}

func benchTilings(b *testing.B, base *cudaEngine, w, d int, n int64) {
	j := job(b, 1, w, d)
	spec := bakeapi.Spec{Width: w, Depth: d, NSamples: n, Sampler: bakeapi.SamplerPhilox}
	warm := bakeapi.Spec{Width: w, Depth: d, NSamples: 1 << 12, Sampler: bakeapi.SamplerPhilox}
	want, _ := bakeTotals(b, base, spec, j)
	for _, s := range cudakernel.TilingCandidates(w, d, base.dev.maxShared) {
		e := &cudaEngine{
			dev:     base.dev,
			path:    CUDAPathFused,
			tiling:  &s,
			runners: newRunnerCache[cudaRunner](1),
		}
		name := fmt.Sprintf("TM%d_RT%d_CT%d_KS%d_KU%d", s.TM, s.RT, s.CT, s.KS, max(1, s.KU))
		if s.Resident {
			name += "_resident"
		}
		b.Run(name, func(b *testing.B) {
			bakeTotals(b, e, warm, j)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if got, _ := bakeTotals(b, e, spec, j); !sameResult(got, want) {
					b.Fatalf("%v changed the result", s)
				}
			}
			perSec := float64(spec.NSamples) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(perSec*2*float64(w*w*d)/1e12, "TFLOP/s")
		})
		e.dev.mu.Lock()
		err := e.dev.do(e.runners.close)
		e.dev.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
}
