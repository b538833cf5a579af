//go:build cuda

package gpuengine

// GPU tests of --precision tf32x3 (docs/GPU.md, "Precision tf32x3"): its bits depend on
// the GPU's tensor cores alone, never on the chunk, the grid or a resume on the same
// engine; its means lie within bakeapi.TF32x3MeanTolerance of the fp32 path's on the
// same inputs. The tests log the deviations the first device run refits the tolerance
// from. And the RNG's branch-free division and square root, against CUDA's own, on all
// 2^32 words.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/bakeapi"
)

func tf32Spec(w, d int, n int64, chunk int) bakeapi.Spec {
	return bakeapi.Spec{
		Width:     w,
		Depth:     d,
		NSamples:  n,
		Sampler:   bakeapi.SamplerPhilox,
		ChunkSize: chunk,
		Precision: bakeapi.PrecisionTF32x3,
	}
}

// Chunks of 32 and of 2^20 samples, one CTA and all of them, and resumes after 1, 3 and
// 7 checkpoints give one result; a checkpoint of another kernel, or of fp32, is refused.
// With -test.short (the acceptance run's compute-sanitizer step) a bake of 2^12 samples.
func TestCUDATF32x3Deterministic(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathFused)
	j := job(t, 9, 256, 8)
	n, step := int64(1<<16+17), 8192
	if testing.Short() {
		n, step = 1<<12+17, 512
	}
	ref, refTotals := bakeTotals(t, e, tf32Spec(256, 8, n, 1<<20), j)
	for _, ctas := range []int{1, 0} {
		g := &cudaEngine{dev: e.dev, path: CUDAPathFused, maxCTAs: ctas,
			runners: newRunnerCache[cudaRunner](maxRunners)}
		for _, chunk := range []int{32, 1 << 20} {
			got, totals := bakeTotals(t, g, tf32Spec(256, 8, n, chunk), j)
			if !sameResult(got, ref) || fmt.Sprint(totals) != fmt.Sprint(refTotals) {
				t.Fatalf("chunk %d, at most %d CTAs: the result changed", chunk, ctas)
			}
		}
	}
	spec := tf32Spec(256, 8, n, step)
	for _, stopAfter := range []int{1, 3, 7} {
		last := stopped(t, e, spec, j, stopAfter)
		if desc, err := DescribeFor(e, spec); err != nil || last.Kernel != desc.Kernel {
			t.Fatalf("checkpoint kernel %q, engine %q (%v)", last.Kernel, desc.Kernel, err)
		}
		res, err := e.BakeMLP(context.Background(), spec, j, last, nil)
		if err != nil || !sameResult(res, ref) {
			t.Fatalf("resumed at %d: %v, result same %v", last.SamplesDone, err, sameResult(res, ref))
		}
		other := *last
		other.Kernel += "0"
		if _, err := e.BakeMLP(context.Background(), spec, j, &other, nil); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("a checkpoint of another kernel: err = %v", err)
		}
	}
	fp32 := stopped(t, e, bakeapi.Spec{Width: 256, Depth: 8, NSamples: n, Sampler: bakeapi.SamplerPhilox,
		ChunkSize: step}, j, 2)
	if _, err := e.BakeMLP(context.Background(), spec, j, fp32, nil); !errors.Is(err, ErrBadCheckpoint) {
		t.Errorf("an fp32 checkpoint resumed a tf32x3 bake: err = %v", err)
	}
	if _, err := (CPU{}).BakeMLP(context.Background(), spec, j, nil, nil); err == nil {
		t.Error("the CPU engine accepted tf32x3")
	}
}

// stopped bakes spec on e until stopAfter checkpoints and returns the last.
func stopped(t *testing.T, e Engine, spec bakeapi.Spec, j Job, stopAfter int) *Checkpoint {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last *Checkpoint
	calls := 0
	_, err := e.BakeMLP(ctx, spec, j, nil, func(cp Checkpoint) {
		c := cp
		c.LayerExact = append([]string(nil), cp.LayerExact...)
		c.SquareExact = append([]string(nil), cp.SquareExact...)
		last = &c
		if calls++; calls == stopAfter {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stop after %d: err = %v", stopAfter, err)
	}
	return last
}

// At 2^24 samples every per-neuron mean lies within bakeapi.TF32x3MeanTolerance (of its
// layer's largest mean) of the fp32 fused path's on the same inputs, avg_variance within
// TF32x3VarianceTolerance. Logged per layer: the largest deviation relative to the
// layer's scale, and in units of σ_MC at 1e9 samples, σ_j ≈ sqrt(π−1)·|m_j| (a relu of a
// zero-mean normal), for refitting the tolerances.
func TestCUDATF32x3CloseToFP32(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathFused)
	for _, net := range []struct{ w, d int }{{256, 8}, {64, 4}} {
		j := job(t, 21, net.w, net.d)
		fp32 := tf32Spec(net.w, net.d, 1<<24, 0)
		fp32.Precision = bakeapi.PrecisionFP32
		want, _ := bakeTotals(t, e, fp32, j)
		got, _ := bakeTotals(t, e, tf32Spec(net.w, net.d, 1<<24, 0), j)
		for l := range net.d {
			m, g := want.LayerMeans[l*net.w:(l+1)*net.w], got.LayerMeans[l*net.w:(l+1)*net.w]
			var scale, dev, sigmas, bias float64
			for i := range m {
				scale = max(scale, math.Abs(float64(m[i])))
			}
			for i := range m {
				d := float64(g[i]) - float64(m[i])
				bias += d / scale / float64(net.w)
				dev = max(dev, math.Abs(d)/scale)
				if sd := math.Sqrt(math.Pi-1) * math.Abs(float64(m[i])) / math.Sqrt(1e9); sd > 0 {
					sigmas = max(sigmas, math.Abs(d)/sd)
				}
			}
			t.Logf("W%d D%d layer %d: largest deviation %.2e of the layer's scale "+
				"(mean %+.2e), %.3f σ_MC at 1e9", net.w, net.d, l+1, dev, bias, sigmas)
			if dev > bakeapi.TF32x3MeanTolerance {
				t.Errorf("W%d D%d layer %d: deviation %.2e beyond the tolerance %.0e",
					net.w, net.d, l+1, dev, bakeapi.TF32x3MeanTolerance)
			}
		}
		rel := math.Abs(got.AvgVariance-want.AvgVariance) / want.AvgVariance
		t.Logf("W%d D%d avg_variance: %.2e relative", net.w, net.d, rel)
		if rel > bakeapi.TF32x3VarianceTolerance {
			t.Errorf("W%d D%d avg_variance %v, fp32 %v", net.w, net.d, got.AvgVariance, want.AvgVariance)
		}
	}
}

// go test -tags cuda -run XXX -bench CUDATF32x3 ./gpuengine/ — effective TFLOP/s count
// 2·W²·D per sample, as for fp32.
func BenchmarkCUDATF32x3(b *testing.B) {
	e := cudaEngineFor(b, CUDAPathFused)
	for _, net := range []struct {
		w, d int
		n    int64
	}{{256, 8, 1 << 25}, {64, 4, 1 << 27}} {
		b.Run(fmt.Sprintf("W%d_D%d", net.w, net.d), func(b *testing.B) {
			j := job(b, 1, net.w, net.d)
			bakeTotals(b, e, tf32Spec(net.w, net.d, 1<<12, 0), j) // compile, upload
			spec := tf32Spec(net.w, net.d, net.n, 0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bakeTotals(b, e, spec, j)
			}
			perSec := float64(spec.NSamples) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(perSec*2*float64(net.w*net.w*net.d)/1e12, "TFLOP/s")
		})
	}
}

// radiusCheck computes bm_radius and the same radius with CUDA's __fdiv_rn and
// __fsqrt_rn for every 32-bit word and counts the words where they differ.
const radiusCheck = `#include "philox.cuh"
WB_DEVICE float cuda_radius(u32 r)
{
    u64 m = ((u64)r << 1) | 1ull;
    int e = 63 - __clzll((long long)m);
    u64 top = e >= 23 ? m >> (e - 23) : m << (23 - e);
    if (top > 0xb504f3ull)
        e++;
    u64 p2 = 1ull << e;
    float s = __fdiv_rn(__ll2float_rn((long long)m - (long long)p2), __ull2float_rn(m + p2));
    float s2 = __fmul_rn(s, s), p = __int_as_float(0x3e3a2e8c);
    const int c[5] = {0x3e638e39, 0x3e924925, 0x3ecccccd, 0x3f2aaaab, 0x40000000};
    for (int i = 0; i < 5; i++)
        p = __fadd_rn(__fmul_rn(p, s2), __int_as_float(c[i]));
    float k = __int2float_rn(e - 33);
    float lnu = __fadd_rn(__fmul_rn(k, __int_as_float(0x3f317200)),
                          __fadd_rn(__fmul_rn(k, __int_as_float(0x35bfbe8e)), __fmul_rn(p, s)));
    return __fsqrt_rn(__fmul_rn(-2.0f, lnu));
}
extern "C" __global__ void radius_check(u64* bad, u64* first)
{
    for (u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x; r < (1ull << 32); r += (u64)gridDim.x * blockDim.x)
        if (__float_as_int(bm_radius((u32)r)) != __float_as_int(cuda_radius((u32)r))) {
            atomicAdd(bad, 1ull);
            atomicMin(first, r);
        }
}
`

// The device runs the radius exactly as the host proved it (TestHostRadiusExhaustive):
// for every word, bm_radius equals the radius with CUDA's correctly rounded __fdiv_rn
// and __fsqrt_rn.
func TestCUDARadiusExhaustive(t *testing.T) {
	e := cudaEngineFor(t, CUDAPathFused)
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if err := e.dev.do(func() error {
		mod, err := e.dev.compile("radius_check.cu", radiusCheck, nil)
		if err != nil {
			return err
		}
		defer func() { _ = mod.unload() }()
		fn, err := mod.mod.Function("radius_check")
		if err != nil {
			return err
		}
		out, err := alloc("radius check", 16)
		if err != nil {
			return err
		}
		defer func() { _ = freeBuffers(out) }()
		init := [2]uint64{0, math.MaxUint64}
		if err := cu.MemcpyHtoD(out.ptr, unsafe.Pointer(&init[0]), 16); err != nil {
			return err
		}
		bad, first := out.ptr, out.ptr+8
		args := []unsafe.Pointer{unsafe.Pointer(&bad), unsafe.Pointer(&first)}
		if err := fn.Launch(8*e.dev.sms, 1, 1, 256, 1, 1, 0, cu.NoStream, args); err != nil {
			return err
		}
		if err := cu.Synchronize(); err != nil {
			return err
		}
		var res [2]uint64
		if err := cu.MemcpyDtoH(unsafe.Pointer(&res[0]), out.ptr, 16); err != nil {
			return err
		}
		if res[0] != 0 {
			t.Errorf("%d words give another radius than __fdiv_rn and __fsqrt_rn, the first %#x",
				res[0], res[1])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
