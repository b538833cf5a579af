package rows

import (
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bytesize"
)

// Issue 8's oversized shape: 16384 × 1024 needs a 1 TiB row. It is refused
// with its estimate instead of crashing the process that tries it.
func TestCheckMemoryRefusesAShapeThatCannotFit(t *testing.T) {
	huge := bakeapi.Spec{
		Width:    16384,
		Depth:    1024,
		NSamples: 1000,
		Sampler:  bakeapi.SamplerPhilox,
	}
	err := CheckMemory(huge, 8, 64<<30)
	if err == nil || !strings.Contains(err.Error(), "one row alone is 1.0 TB") ||
		!strings.Contains(err.Error(), "above the 64.0 GB") {
		t.Fatalf("CheckMemory(16384×1024) = %v", err)
	}
	prod := bakeapi.Spec{
		Width:    256,
		Depth:    8,
		NSamples: 1e9,
		Sampler:  bakeapi.SamplerPhilox,
	}
	if err := CheckMemory(prod, 16, 1<<30); err != nil {
		t.Fatalf("the production shape does not fit in 1 GiB: %v", err)
	}
	if err := CheckMemory(huge, 8, 0); err != nil {
		t.Fatalf("an unknown limit (0) refused a bake: %v", err)
	}
}

// The estimate covers the peaks `make bench-scale` measured (docs/
// benchmarks.md: `dataset bake` and BakeSlice, n_samples 64 on 2 threads,
// whose peaks do not grow with the MLP count) without asking for more than
// twice of them: one-row groups at W=1024 D=16, 31-row groups at W=256 D=8.
func TestMemoryNeedCoversTheMeasuredPeak(t *testing.T) {
	philox := func(width, depth int) bakeapi.Spec {
		return bakeapi.Spec{
			Width:    width,
			Depth:    depth,
			NSamples: 64,
			Sampler:  bakeapi.SamplerPhilox,
		}
	}
	for _, c := range []struct {
		spec     bakeapi.Spec
		measured int64
	}{
		{philox(1024, 16), 183 << 20},
		{philox(256, 8), 185 << 20},
	} {
		if need := MemoryNeed(c.spec, 2); need < c.measured || need > 2*c.measured {
			t.Errorf(
				"%d×%d: MemoryNeed = %s for a measured peak of %s",
				c.spec.Width,
				c.spec.Depth,
				bytesize.Format(need),
				bytesize.Format(c.measured),
			)
		}
	}
}
