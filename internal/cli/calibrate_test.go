package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

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

// A bake far below the crossover (4e4 MLP·samples at 8×2; the H100's measured rates put
// it above 1e6 even against one slow thread) stays on the CPU.
func TestCalibrateOnCPU(t *testing.T) {
	cmd := newCalibrateCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--n-mlps", "2", "--n-samples", "2e4", "--width", "8", "--depth", "2", "--device", "cpu",
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
