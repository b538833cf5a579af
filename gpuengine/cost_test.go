package gpuengine

import (
	"math"
	"testing"
	"time"
)

// The crossover against a hand computation: W=256, D=1 is 131072 FLOP per sample;
// one thread at 1 GFLOP/s takes 131.072 µs, the GPU at 11 GFLOP/s 11.9156 µs, so 1 s of
// startup is repaid after 1 s / 119.156 µs = 8392.3 samples.
func TestCrossoverAnalytic(t *testing.T) {
	r := Rates{CPUFLOPSPerThread: 1e9, GPUFLOPS: 11e9, GPUStartup: time.Second}
	want := 1 / (131072/1e9 - 131072/11e9)
	if got := r.Crossover(256, 1, 1); math.Abs(got-want) > 1e-9*want {
		t.Errorf("crossover = %v, want %v", got, want)
	}
	if r.PreferGPU(256, 1, 1, 8392, 1) || !r.PreferGPU(256, 1, 1, 8393, 1) {
		t.Error("preferGPU does not switch at the crossover")
	}
	// A GPU no faster than the CPU threads never pays its startup back.
	if got := r.Crossover(256, 1, 11); !math.IsInf(got, 1) {
		t.Errorf("11 threads at 1 GFLOP/s vs an 11 GFLOP/s GPU: crossover %v, want +Inf", got)
	}
}

// With the default constants the GPU loses tiny bakes and wins the
// production bake; narrow and shallow networks move the crossover up.
func TestCrossoverDefaults(t *testing.T) {
	for _, c := range []struct {
		w, d          int
		mlps, samples int64
		threads       int
		gpu           bool
	}{
		{20, 3, 1, 1000, 1, false},
		{256, 8, 1, 10_000, 16, false},
		{256, 8, 10, 1_000_000_000, 16, true},
		{256, 8, 100, 1_000_000, 16, true},
		{64, 4, 5, 100_000, 16, false},
	} {
		if got := DefaultRates.PreferGPU(c.w, c.d, c.mlps, c.samples, c.threads); got != c.gpu {
			t.Errorf(
				"%d×%d, %d MLPs × %d samples, %d threads: GPU %v, want %v",
				c.w,
				c.d,
				c.mlps,
				c.samples,
				c.threads,
				got,
				c.gpu,
			)
		}
	}
	if DefaultRates.Crossover(64, 8, 16) <= DefaultRates.Crossover(256, 8, 16) {
		t.Error("a narrower network must need more samples before the GPU pays off")
	}
	if DefaultRates.Crossover(256, 8, 32) <= DefaultRates.Crossover(256, 8, 16) {
		t.Error("more CPU threads must move the crossover up")
	}
}
