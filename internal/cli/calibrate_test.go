package cli

import (
	"bytes"
	"strings"
	"testing"
)

// A bake far below the crossover (4e4 MLP·samples at 8×2; the H100's measured rates put
// it above 1e6 even against one slow thread) stays on the CPU.
func TestCalibrateOnCPU(t *testing.T) {
	cmd := newCalibrateCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--n-mlps", "2", "--n-samples", "2e4", "--width", "8", "--depth", "2",
		"--device", "cpu", "--threads", "1", "--seconds", "50ms"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"whestbake calibrate: cpu", "warm-up", "calibration", "projection", "measured: CPU",
		"--device auto would choose the CPU",
	} {
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
		shape := []string{"--width", "4", "--depth", "1", "--n-samples", "1000"}
		cmd.SetArgs(append(shape, args...))
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
