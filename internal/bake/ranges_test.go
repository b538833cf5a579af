package bake

import (
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

func TestParseMLPRangeIsInclusive(t *testing.T) {
	r, err := ParseMLPRange("2-5", 10)
	if err != nil || r != (bakeapi.Range{Start: 2, End: 6}) || r.Len() != 4 {
		t.Fatalf("2-5 = %v, %v", r, err)
	}
	for _, bad := range []string{"5", "a-b", "3-2", "0-10", "-1-3"} {
		if _, err := ParseMLPRange(bad, 10); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseSeeds(t *testing.T) {
	sf, err := ParseSeeds("s.json", []byte("[1001,2002,3003,4004]\n"), 4)
	if err != nil || len(sf.Seeds) != 4 || sf.Seeds[3] != 4004 || len(sf.SHA256) != 64 {
		t.Fatalf("%+v %v", sf, err)
	}
	// 2^63 - 1 is the largest legal seed (whestbench accepts it).
	if _, err := ParseSeeds("s.json", []byte("[9223372036854775807]"), 1); err != nil {
		t.Fatal(err)
	}
	for bad, n := range map[string]int{
		"[true]":  1,
		"[1.5]":   1,
		"[1, 1]":  2,
		"[1] [2]": 1,
		"{}":      1,
		`["1"]`:   1,
		"[-1]":    1,
		"[null]":  1,
		"[1e3]":   1,
	} {
		if _, err := ParseSeeds("s.json", []byte(bad), n); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := ParseSeeds("s.json", []byte("[]"), 1); err == nil {
		t.Error("empty list accepted for n=1")
	}
}

func TestGeneratedSeedsHashTheCanonicalEncoding(t *testing.T) {
	a, b := FromSeeds([]int64{5, 6}), FromSeeds([]int64{5, 6})
	if a.SHA256 != b.SHA256 || string(EncodeSeeds([]int64{5, 6})) != "[5, 6]\n" {
		t.Fatal("canonical encoding not stable")
	}
	p, err := ParseSeeds("x", EncodeSeeds([]int64{5, 6}), 2)
	if err != nil || p.SHA256 != a.SHA256 {
		t.Fatal("a written seeds file must hash like the generated list")
	}
}
