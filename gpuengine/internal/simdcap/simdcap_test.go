package simdcap

import "testing"

func TestParse(t *testing.T) {
	for v, want := range map[string]Level{
		"": AVX512, "auto": AVX512, "avx512": AVX512, "AVX512F": AVX512,
		"avx2": AVX2, " avx2-fma ": AVX2, "generic": Generic, "go": Generic,
	} {
		if got, err := Parse(v); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"avx", "sse4", "avx2,fma", "none"} {
		if _, err := Parse(v); err == nil {
			t.Errorf("Parse(%q) accepted", v)
		}
	}
	if !Allows(Generic) || Allows(Ceiling()+1) {
		t.Errorf("Allows disagrees with Ceiling() = %v", Ceiling())
	}
}
