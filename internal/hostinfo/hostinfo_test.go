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
