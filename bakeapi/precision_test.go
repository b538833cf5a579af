package bakeapi

import (
	"errors"
	"strings"
	"testing"
)

// tf32x3 is a philox algorithm of its own; fp32 is the default and has no name in a Spec.
func TestPrecisionValidateAndAlgorithm(t *testing.T) {
	ok := Spec{Width: 8, Depth: 2, NSamples: 64, Sampler: SamplerPhilox, Precision: PrecisionTF32x3}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := ok.Algorithm(); got != PhiloxTF32x3Algorithm {
		t.Errorf("Algorithm() = %q, want %q", got, PhiloxTF32x3Algorithm)
	}
	fp32 := ok
	fp32.Precision = ""
	if got := fp32.Algorithm(); got != PhiloxAlgorithm {
		t.Errorf("fp32: Algorithm() = %q", got)
	}
	for _, c := range []struct {
		mut  func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Sampler, s.Dot = SamplerNumpy, DotFMA }, "philox sampler only"},
		{func(s *Spec) { s.Precision = "fp32" }, "the default"},
		{func(s *Spec) { s.Precision = "tf32" }, "unknown"},
	} {
		s := ok
		c.mut(&s)
		var fe FieldErrors
		if err := s.Validate(); !errors.As(err, &fe) || fe[0].Field != FieldPrecision ||
			!strings.Contains(fe[0].Problem, c.want) {
			t.Errorf("%+v: %v, want a %s error saying %q", s, err, FieldPrecision, c.want)
		}
	}
}

// A dataset's engine text gives its tensor-core identity back, and nothing else parses.
func TestTensorCoresRoundTrip(t *testing.T) {
	id := TensorCores{
		GPU:    "NVIDIA H200",
		Arch:   "sm_90",
		Driver: "13.0",
		NVRTC:  "13.0",
		Scheme: "mma.sync.m16n8k8.tf32 3xTF32 big=RZ small=RNA sb,bs,bb k8-from-0 +RN/1",
		Kernel: strings.Repeat("ab", 32),
	}
	for _, s := range []string{id.String(), "cuda/" + id.String()} {
		got, ok := ParseTensorCores(s)
		if !ok || got != id {
			t.Errorf("ParseTensorCores(%q) = %+v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"cuda/fused", "cpu/avx2-fma", "", "tf32x3 arch=sm_90",
		`tf32x3 arch=sm_90 kernel=ab gpu="open`, "tf32x3 arch=sm_90 kernel=ab color=red"} {
		if got, ok := ParseTensorCores(s); ok {
			t.Errorf("ParseTensorCores(%q) = %+v, want none", s, got)
		}
	}
	other := id
	other.GPU, other.Driver = "NVIDIA H100 80GB HBM3", "12.8"
	if !id.SameBits(other) {
		t.Error("the same architecture and kernel on another GPU name or driver must give the same bits")
	}
	other.Arch = "sm_80"
	if id.SameBits(other) {
		t.Error("another architecture gave the same bits")
	}
}
