package gpuengine

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// numpy's own np.sum/np.mean results (testdata/gen_pairwise.py, Debian numpy).
func TestPairwiseSumMatchesNumpy(t *testing.T) {
	data, err := os.ReadFile("testdata/pairwise_sum.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			X         []string
			Sum, Mean string
		}
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	f := func(s string) float64 {
		u, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		return math.Float64frombits(u)
	}
	for _, c := range file.Cases {
		x := make([]float64, len(c.X))
		for i, s := range c.X {
			x[i] = f(s)
		}
		if got := pairwiseSum(x); math.Float64bits(got) != math.Float64bits(f(c.Sum)) {
			t.Errorf("n=%d: sum %v, numpy %v", len(x), got, f(c.Sum))
		}
		if got := pairwiseSum(x) / float64(len(x)); got != f(c.Mean) {
			t.Errorf("n=%d: mean %v, numpy %v", len(x), got, f(c.Mean))
		}
	}
}
