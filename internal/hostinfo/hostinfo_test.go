package hostinfo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProcFieldTakesTheFirstNonEmptyValue(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cpuinfo")
	cpuinfo := "processor\t: 0\n" +
		"model name\t:\n" +
		"model name\t: Xeon X\n" +
		"model name\t: Xeon Y\n"
	if err := os.WriteFile(p, []byte(cpuinfo), 0o644); err != nil {
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
	zen4Info := "processor\t: 0\n" +
		"vendor_id\t: AuthenticAMD\n" +
		"cpu family\t: 25\n" +
		"model\t\t: 17\n" +
		"model name\t: AMD EPYC\n" +
		"stepping\t: 1\n" +
		"\n" +
		"processor\t: 1\n" +
		"vendor_id\t: AuthenticAMD\n" +
		"cpu family\t: 25\n" +
		"model\t\t: 17\n"
	if err := os.WriteFile(zen4, []byte(zen4Info), 0o644); err != nil {
		t.Fatal(err)
	}
	want := CPU{
		Vendor:    "AuthenticAMD",
		Family:    25,
		Model:     17,
		ModelName: "AMD EPYC",
	}
	if got := ParseCPU(zen4); got != want {
		t.Errorf("ParseCPU = %+v, want %+v", got, want)
	}
	arm := filepath.Join(dir, "arm")
	armInfo := "processor\t: 0\n" +
		"BogoMIPS\t: 50.00\n" +
		"CPU implementer\t: 0x41\n" +
		"CPU part\t: 0xd0c\n"
	if err := os.WriteFile(arm, []byte(armInfo), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ParseCPU(arm); got != (CPU{}) {
		t.Errorf("ParseCPU of an arm64 cpuinfo = %+v, want the zero CPU", got)
	}
	if got := ParseCPU(filepath.Join(dir, "none")); got != (CPU{}) {
		t.Errorf("missing file: %+v", got)
	}
}
