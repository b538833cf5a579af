package hostinfo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProcFieldTakesTheFirstNonEmptyValue(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(p, []byte("processor\t: 0\nmodel name\t:\nmodel name\t: Xeon X\nmodel name\t: Xeon Y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ProcField(p, "model name"); got != "Xeon X" {
		t.Errorf("model name = %q", got)
	}
	if got := ProcField(p, "flags"); got != "" {
		t.Errorf("missing key = %q", got)
	}
	if got := ProcField(filepath.Join(t.TempDir(), "none"), "model name"); got != "" {
		t.Errorf("missing file = %q", got)
	}
}

func TestMemoryLimitIsPositiveAndAtMostPhysical(t *testing.T) {
	lim := MemoryLimit()
	phys := ProcField("/proc/meminfo", "MemTotal")
	if phys == "" {
		t.Skip("no /proc/meminfo here")
	}
	if lim <= 0 {
		t.Fatalf("MemoryLimit = %d with /proc/meminfo present", lim)
	}
}

func TestParseCPU(t *testing.T) {
	dir := t.TempDir()
	zen4 := filepath.Join(dir, "zen4")
	if err := os.WriteFile(zen4, []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := ParseCPU(zen4), (CPU{"AuthenticAMD", 25, 17, "AMD EPYC"}); got != want {
		t.Errorf("ParseCPU = %+v, want %+v", got, want)
	}
	arm := filepath.Join(dir, "arm")
	if err := os.WriteFile(arm, []byte("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ParseCPU(arm); got != (CPU{}) {
		t.Errorf("ParseCPU of an arm64 cpuinfo = %+v, want the zero CPU", got)
	}
	if got := ParseCPU(filepath.Join(dir, "none")); got != (CPU{}) {
		t.Errorf("missing file: %+v", got)
	}
}
