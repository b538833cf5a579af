package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// The crossover against a hand computation: W=256, D=1 is 131072 FLOP per sample;
// one thread at 1 GFLOP/s takes 131.072 µs, the GPU at 11 GFLOP/s 11.9156 µs, so 1 s of
// startup is repaid after 1 s / 119.156 µs = 8392.3 samples.
func TestCrossoverAnalytic(t *testing.T) {
	r := deviceRates{CPUFLOPSPerThread: 1e9, GPUFLOPS: 11e9, GPUStartup: time.Second}
	want := 1 / (131072/1e9 - 131072/11e9)
	if got := crossover(256, 1, 1, r); math.Abs(got-want) > 1e-9*want {
		t.Errorf("crossover = %v, want %v", got, want)
	}
	if preferGPU(256, 1, 1, 8392, 1, r) || !preferGPU(256, 1, 1, 8393, 1, r) {
		t.Error("preferGPU does not switch at the crossover")
	}
	// A GPU no faster than the CPU threads never pays its startup back.
	if got := crossover(256, 1, 11, r); !math.IsInf(got, 1) {
		t.Errorf("11 threads at 1 GFLOP/s vs an 11 GFLOP/s GPU: crossover %v, want +Inf", got)
	}
}

// With the default constants the GPU loses tiny bakes (shared/seeds/003) and wins the
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
		if got := preferGPU(c.w, c.d, c.mlps, c.samples, c.threads, defaultRates); got != c.gpu {
			t.Errorf("%d×%d, %d MLPs × %d samples, %d threads: GPU %v, want %v", c.w, c.d, c.mlps, c.samples, c.threads, got, c.gpu)
		}
	}
	if crossover(64, 8, 16, defaultRates) <= crossover(256, 8, 16, defaultRates) {
		t.Error("a narrower network must need more samples before the GPU pays off")
	}
	if crossover(256, 8, 32, defaultRates) <= crossover(256, 8, 16, defaultRates) {
		t.Error("more CPU threads must move the crossover up")
	}
}

func TestProjectIsLinear(t *testing.T) {
	// 3 MLPs × 1e6 samples in 1 s → 10 MLPs × 1e9 samples in 10000/3 s.
	got := project(time.Second, 3, 1_000_000, 10, 1_000_000_000)
	if want := 10_000 * time.Second / 3; (got - want).Abs() > time.Millisecond {
		t.Errorf("project = %v, want %v", got, want)
	}
}

func TestCalibrationSamples(t *testing.T) {
	// 1e6 samples/s, 3 s, 3 MLPs: 1e6 each, rounded down to the tile.
	if got := calibrationSamples(1_000_000, time.Second, 3*time.Second, 3, 1<<40); got != 1_000_000/32*32 {
		t.Errorf("got %d", got)
	}
	if got := calibrationSamples(1<<14, time.Second, time.Millisecond, 3, 1<<40); got != 1<<14 {
		t.Errorf("never below the probe: got %d", got)
	}
	if got := calibrationSamples(1<<14, time.Microsecond, time.Hour, 1, 5000); got != 5000 {
		t.Errorf("never above the bake: got %d", got)
	}
}

func TestCalibrateOnCPU(t *testing.T) {
	cmd := newCalibrateCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--n-mlps", "4", "--n-samples", "1e6", "--width", "8", "--depth", "2", "--device", "cpu",
		"--threads", "1", "--seconds", "50ms"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"whestbake calibrate: cpu", "warm-up", "calibration", "projection", "measured: CPU",
		"--device auto would choose the CPU"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestCalibrateRefusesBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--device", "tpu"},
		{"--seconds", "0s", "--device", "cpu"},
		{"--device", "cuda"}, // this build has no CUDA
	} {
		cmd := newCalibrateCmd()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(append([]string{"--width", "4", "--depth", "1", "--n-samples", "1000"}, args...))
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
