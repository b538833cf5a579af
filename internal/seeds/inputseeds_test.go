package seeds

import (
	"slices"
	"strings"
	"testing"
)

func TestGenerateInputSeedsSeededMatchesNumpy(t *testing.T) {
	for _, c := range loadVectors(t).InputSeeds {
		seed := c.Seed
		got, err := GenerateInputSeeds(len(c.Seeds), &seed)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.Seeds) {
			t.Errorf("seed %d: %v, numpy random_raw>>1 %v", c.Seed, got, c.Seeds)
		}
	}
}

func TestGenerateInputSeedsFromOS(t *testing.T) {
	const n = 1000
	got, err := GenerateInputSeeds(n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d seeds, want %d", len(got), n)
	}
	seen := map[int64]bool{}
	for _, s := range got {
		if s < 0 || seen[s] {
			t.Fatalf("seed %d negative or repeated", s)
		}
		seen[s] = true
	}
	again, _ := GenerateInputSeeds(n, nil)
	if slices.Equal(got, again) {
		t.Fatal("two OS-entropy calls gave the same seeds")
	}
}

func TestGenerateInputSeedsCounts(t *testing.T) {
	if s, err := GenerateInputSeeds(0, nil); err != nil || len(s) != 0 {
		t.Fatalf("n=0: %v, %v", s, err)
	}
	_, err := GenerateInputSeeds(-1, nil)
	if err == nil || !strings.Contains(err.Error(), "n must be non-negative") {
		t.Fatalf("n=-1: error %v, want one naming n", err)
	}
}
