package gpuengine

import (
	"context"
	"testing"
	"time"
)

func TestProjectIsLinear(t *testing.T) {
	// 3 MLPs × 1e6 samples in 1 s → 10 MLPs × 1e9 samples in 10000/3 s.
	m := Calibration{MLPs: 3, Samples: 1_000_000, Took: time.Second}
	got := m.Project(10, 1_000_000_000)
	if want := 10_000 * time.Second / 3; (got - want).Abs() > time.Millisecond {
		t.Errorf("project = %v, want %v", got, want)
	}
}

func TestCalibrationSamples(t *testing.T) {
	// 1e6 samples/s, 3 s, 3 MLPs: 1e6 each, rounded down to the tile.
	got := calibrationSamples(1_000_000, time.Second, 3*time.Second, 3, 1<<40)
	if got != 1_000_000/32*32 {
		t.Errorf("got %d", got)
	}
	if got := calibrationSamples(1<<14, time.Second, time.Millisecond, 3, 1<<40); got != 1<<14 {
		t.Errorf("never below the probe: got %d", got)
	}
	if got := calibrationSamples(1<<14, time.Microsecond, time.Hour, 1, 5000); got != 5000 {
		t.Errorf("never above the bake: got %d", got)
	}
}

// A measured rate replaces its device's default and nothing else; a GPU
// measured at width 128 runs at half its width-256 rate (Rates.gpuRate),
// so its full rate is twice the measured one.
func TestCalibrationRates(t *testing.T) {
	m := Calibration{FLOPRate: 8e9, Warm: 3 * time.Second}
	cpu := m.Rates(DeviceCPU, 256, 4)
	if cpu.CPUFLOPSPerThread != 2e9 || cpu.GPUFLOPS != DefaultRates.GPUFLOPS ||
		cpu.GPUStartup != DefaultRates.GPUStartup {
		t.Errorf("CPU calibration: %+v", cpu)
	}
	gpu := m.Rates(DeviceCUDA, 128, 4)
	if gpu.GPUFLOPS != 16e9 || gpu.GPUStartup != 3*time.Second ||
		gpu.CPUFLOPSPerThread != DefaultRates.CPUFLOPSPerThread {
		t.Errorf("GPU calibration: %+v", gpu)
	}
	if got := gpu.gpuRate(128); got != m.FLOPRate {
		t.Errorf("the measured width's rate is %g, want the measured %g", got, m.FLOPRate)
	}
}

// A calibration on the CPU engine times what it says: the run's rate is
// its MLPs × samples over its wall time, each FLOP 2·W²·D per sample, and
// the run is sized between the probe and the bake.
func TestCalibrateOnCPUEngine(t *testing.T) {
	in := CalibrateInput{
		Width:    8,
		Depth:    2,
		NMLPs:    2,
		NSamples: 20_000,
		Threads:  1,
		Target:   50 * time.Millisecond,
		Opened:   time.Now(),
	}
	m, err := Calibrate(context.Background(), CPU{}, in)
	if err != nil {
		t.Fatal(err)
	}
	if m.WarmSamples != 4096 || m.MLPs != 2 || m.Samples < 1<<14 || m.Samples > in.NSamples {
		t.Errorf(
			"calibration %+v: want a 4096-sample warm-up, 2 MLPs, samples in [16384, 20000]",
			m,
		)
	}
	if want := float64(m.MLPs) * float64(m.Samples) / m.Took.Seconds(); m.Rate != want {
		t.Errorf("rate %g, want %g", m.Rate, want)
	}
	if want := m.Rate * 2 * 8 * 8 * 2; m.FLOPRate != want {
		t.Errorf("FLOP rate %g, want %g", m.FLOPRate, want)
	}
}
