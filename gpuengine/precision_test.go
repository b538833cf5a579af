package gpuengine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

// The CPU engines compute fp32 only: a tf32x3 spec is refused before any work, naming
// the precision and the engine that computes it.
func TestCPURefusesTF32x3(t *testing.T) {
	spec := bakeapi.Spec{Width: 8, Depth: 2, NSamples: 64, Sampler: bakeapi.SamplerPhilox,
		Precision: bakeapi.PrecisionTF32x3}
	_, err := CPU{}.BakeMLP(context.Background(), spec, job(t, 1, 8, 2), nil, nil)
	var fe bakeapi.FieldErrors
	if !errors.As(err, &fe) || fe[0].Field != bakeapi.FieldPrecision ||
		!strings.Contains(fe[0].Problem, "CUDA engine's tensor cores only") {
		t.Fatalf("err = %v, want a precision error pointing to the CUDA engine", err)
	}
	if d, err := DescribeFor(CPU{}, spec); err != nil || d != (CPU{}).Describe() {
		t.Errorf("DescribeFor(CPU) = %+v, %v", d, err)
	}
}
