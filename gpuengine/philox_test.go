package gpuengine

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/philox"
	"github.com/whestbake/whestbake/internal/seeds"
)

func job(t testing.TB, seed uint64, w, d int) Job {
	t.Helper()
	st := seeds.DeriveV3(seed)
	wt, err := seeds.Weights(w, d, st.Weight)
	if err != nil {
		t.Fatal(err)
	}
	return Job{Weights: wt, Sample: st.Sample}
}

func bake(t testing.TB, spec bakeapi.Spec, j Job) Result {
	t.Helper()
	res, err := CPU{}.BakeMLP(context.Background(), spec, j, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sameResult(a, b Result) bool {
	if len(a.LayerMeans) != len(b.LayerMeans) ||
		math.Float64bits(a.AvgVariance) != math.Float64bits(b.AvgVariance) {
		return false
	}
	for i := range a.LayerMeans {
		if math.Float32bits(a.LayerMeans[i]) != math.Float32bits(b.LayerMeans[i]) {
			return false
		}
	}
	return true
}

// Chunk size and thread count are scheduling only: the bits must not move.
func TestPhiloxInvariantToChunksAndThreads(t *testing.T) {
	for _, shape := range []struct {
		w, d int
		n    int64
	}{{8, 3, 5003}, {17, 2, 4096}, {64, 2, 2500}} {
		j := job(t, 77, shape.w, shape.d)
		base := bakeapi.Spec{
			Width:    shape.w,
			Depth:    shape.d,
			NSamples: shape.n,
			Sampler:  bakeapi.SamplerPhilox,
		}
		ref := bake(t, base, j)
		for _, chunk := range []int{1, 31, 32, 33, 100, 1000, 1 << 20} {
			for _, threads := range []int{1, 2, 3, 7} {
				s := base
				s.ChunkSize = chunk
				jt := j
				jt.Threads = threads
				if got := bake(t, s, jt); !sameResult(got, ref) {
					t.Fatalf(
						"W=%d D=%d: chunk %d threads %d changed the result",
						shape.w,
						shape.d,
						chunk,
						threads,
					)
				}
			}
		}
	}
}

// Interrupt at several points (by cancelling after k checkpoints) and resume from
// the last checkpoint: the result must be the uninterrupted one, bit for bit.
func testResume(t *testing.T, spec bakeapi.Spec) {
	j := job(t, 4242, spec.Width, spec.Depth)
	ref := bake(t, spec, j)
	for _, stopAfter := range []int{1, 2, 5, 9} {
		ctx, cancel := context.WithCancel(context.Background())
		var last *Checkpoint
		calls := 0
		_, err := CPU{}.BakeMLP(ctx, spec, j, nil, func(cp Checkpoint) {
			c := cp // the engine reuses slices: keep a deep copy like a real store would
			c.LayerSums = append([]float64(nil), cp.LayerSums...)
			c.SumSquares = append([]float64(nil), cp.SumSquares...)
			c.LayerExact = append([]string(nil), cp.LayerExact...)
			c.SquareExact = append([]string(nil), cp.SquareExact...)
			last = &c
			if calls++; calls == stopAfter {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stop after %d: err = %v, want context.Canceled", stopAfter, err)
		}
		// Resume twice in a chain to exercise a checkpoint taken after a resume.
		res, err := CPU{}.BakeMLP(context.Background(), spec, j, last, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !sameResult(res, ref) {
			t.Fatalf("resume at %d samples changed the result", last.SamplesDone)
		}
	}
}

func TestPhiloxResumeIsBitExact(t *testing.T) {
	testResume(
		t,
		bakeapi.Spec{
			Width:     16,
			Depth:     3,
			NSamples:  3000,
			Sampler:   bakeapi.SamplerPhilox,
			ChunkSize: 256,
		},
	)
}

func TestNumpyResumeIsBitExact(t *testing.T) {
	// W=1024 gives the numpy chunk rule's smallest chunk (1024 rows): several steps.
	testResume(
		t,
		bakeapi.Spec{
			Width:    1024,
			Depth:    1,
			NSamples: 10*1024 + 7,
			Sampler:  bakeapi.SamplerNumpy,
			Dot:      bakeapi.DotFMA,
		},
	)
}

// Depth 1: z_j ~ N(0, ‖w_j‖²), so E[relu(z_j)] = ‖w_j‖/√(2π) and
// Var = ‖w_j‖²(1/2 − 1/(2π)).
func TestPhiloxDepthOneMatchesAnalytic(t *testing.T) {
	const w, n = 32, 200000
	j := job(t, 9, w, 1)
	res := bake(t, bakeapi.Spec{
		Width:    w,
		Depth:    1,
		NSamples: n,
		Sampler:  bakeapi.SamplerPhilox,
	}, j)
	tol := 5 / math.Sqrt(n)
	var wantVar float64
	for c := 0; c < w; c++ {
		var sq float64
		for i := 0; i < w; i++ {
			v := float64(j.Weights[i*w+c])
			sq += v * v
		}
		want := math.Sqrt(sq) / math.Sqrt(2*math.Pi)
		if d := math.Abs(float64(res.LayerMeans[c]) - want); d > tol {
			t.Errorf(
				"neuron %d: mean %v, analytic %v (|Δ| %g > %g)",
				c,
				res.LayerMeans[c],
				want,
				d,
				tol,
			)
		}
		wantVar += sq * (0.5 - 1/(2*math.Pi)) / w
	}
	if d := math.Abs(res.AvgVariance - wantVar); d > 5*tol {
		t.Errorf("avg_variance %v, analytic %v", res.AvgVariance, wantVar)
	}
}

// The two samplers draw different inputs from the same distribution: every
// neuron's mean must agree within 5/√N.
func TestPhiloxAgreesWithNumpyStatistically(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		w, d int
		n    int64
	}{{1, 8, 2, 200000}, {2, 16, 4, 100000}, {3, 64, 2, 60000}, {4, 4, 6, 200000}} {
		j := job(t, c.seed, c.w, c.d)
		p := bake(
			t,
			bakeapi.Spec{
				Width:    c.w,
				Depth:    c.d,
				NSamples: c.n,
				Sampler:  bakeapi.SamplerPhilox,
			},
			j,
		)
		q := bake(
			t,
			bakeapi.Spec{
				Width:    c.w,
				Depth:    c.d,
				NSamples: c.n,
				Sampler:  bakeapi.SamplerNumpy,
				Dot:      bakeapi.DotFMA,
			},
			j,
		)
		tol := 5 / math.Sqrt(float64(c.n))
		for i := range p.LayerMeans {
			if d := math.Abs(float64(p.LayerMeans[i] - q.LayerMeans[i])); d > tol {
				t.Errorf(
					"seed %d W=%d D=%d: neuron %d: philox %v numpy %v (|Δ| %g > %g)",
					c.seed,
					c.w,
					c.d,
					i,
					p.LayerMeans[i],
					q.LayerMeans[i],
					d,
					tol,
				)
			}
		}
	}
}

func TestSpecValidation(t *testing.T) {
	bad := []bakeapi.Spec{
		{Width: 0, Depth: 1, NSamples: 1, Sampler: bakeapi.SamplerPhilox},
		{Width: 4, Depth: 0, NSamples: 1, Sampler: bakeapi.SamplerPhilox},
		{Width: 4, Depth: 1, NSamples: 0, Sampler: bakeapi.SamplerPhilox},
		{Width: 4, Depth: 1, NSamples: 1, Sampler: "torch"},
		{Width: 4, Depth: 1, NSamples: 1, Sampler: bakeapi.SamplerNumpy, Dot: "fast"},
		{
			Width:     4,
			Depth:     1,
			NSamples:  1,
			Sampler:   bakeapi.SamplerNumpy,
			Dot:       bakeapi.DotFMA,
			ChunkSize: 128,
		},
	}
	for _, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

func BenchmarkPhilox256x8(b *testing.B) { benchEngine(b, bakeapi.SamplerPhilox) }
func BenchmarkNumpy256x8(b *testing.B)  { benchEngine(b, bakeapi.SamplerNumpy) }

func benchEngine(b *testing.B, s bakeapi.Sampler) {
	j := job(b, 1, 256, 8)
	j.Threads = DefaultThreads()
	spec := bakeapi.Spec{
		Width:    256,
		Depth:    8,
		NSamples: 8192,
		Sampler:  s,
	}
	if s == bakeapi.SamplerNumpy {
		spec.Dot = bakeapi.DotFMA
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bake(b, spec, j)
	}
	b.ReportMetric(float64(spec.NSamples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// A philox worker's loop allocates nothing: its blocks are whole register
// blocks of the forward kernel, so none has a ragged tail to pad (a tail's
// pooled pad is cpukernel's TestForwardAllocatesNothing; the race detector's
// sync.Pool drops buffers at random), and the one-thread forward pass builds
// no closure.
func TestPhiloxWorkerAllocatesNothing(t *testing.T) {
	spec := bakeapi.Spec{Width: 64, Depth: 3, Sampler: bakeapi.SamplerPhilox}
	j := job(t, 9, spec.Width, spec.Depth)
	wk := newPhiloxWorker(spec, j.Weights, philox.Sampler{Key: PhiloxKey(j), Width: spec.Width})
	allocs := testing.AllocsPerRun(5, func() {
		if err := wk.run(0, 20*PhiloxBlockRows); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a worker's run over 20 blocks made %v allocations, want 0", allocs)
	}
}
