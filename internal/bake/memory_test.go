package bake

import (
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

// Issue 8's oversized shape: 16384 × 1024 needs a 1 TiB row. It is refused
// with its estimate instead of crashing the process that tries it.
func TestCheckMemoryRefusesAShapeThatCannotFit(t *testing.T) {
	huge := bakeapi.Spec{Width: 16384, Depth: 1024, NSamples: 1000, Sampler: bakeapi.SamplerPhilox}
	err := CheckMemory(huge, 8, 64<<30)
	if err == nil || !strings.Contains(err.Error(), "one row alone is 1.0 TB") || !strings.Contains(err.Error(), "above the 64.0 GB") {
		t.Fatalf("CheckMemory(16384×1024) = %v", err)
	}
	prod := bakeapi.Spec{Width: 256, Depth: 8, NSamples: 1e9, Sampler: bakeapi.SamplerPhilox}
	if err := CheckMemory(prod, 16, 1<<30); err != nil {
		t.Fatalf("the production shape does not fit in 1 GiB: %v", err)
	}
	if err := CheckMemory(huge, 8, 0); err != nil {
		t.Fatalf("an unknown limit (0) refused a bake: %v", err)
	}
}

// The estimate covers what a bake of W=1024 D=16 measured (666 MiB peak RSS
// for `dataset bake --threads 2` at 12 and at 24 MLPs: it does not grow with
// the MLP count) without asking for more than twice of it.
func TestMemoryNeedCoversTheMeasuredPeak(t *testing.T) {
	spec := bakeapi.Spec{Width: 1024, Depth: 16, NSamples: 64, Sampler: bakeapi.SamplerPhilox}
	const measured = 666 << 20
	if need := MemoryNeed(spec, 2); need < measured || need > 2*measured {
		t.Fatalf("MemoryNeed = %s for a measured peak of %s", FormatBytes(need), FormatBytes(measured))
	}
}
