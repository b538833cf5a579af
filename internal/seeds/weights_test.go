package seeds

import (
	"math"
	"strings"
	"testing"
)

func TestWeightsMatchNumpy(t *testing.T) {
	v := loadVectors(t)
	if len(v.Weights) == 0 {
		t.Fatal("no weight vectors")
	}
	for _, c := range v.Weights {
		w, err := Weights(c.Width, c.Depth, DeriveV3(c.InputSeed).Weight)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != c.Width*c.Width*c.Depth {
			t.Fatalf("seed %d (%d,%d): %d weights", c.InputSeed, c.Width, c.Depth, len(w))
		}
		for i, h := range c.First {
			if math.Float32bits(w[i]) != uint32(hexBits(t, h)) {
				t.Fatalf("seed %d (%d,%d): weight #%d = %v, numpy %v",
					c.InputSeed, c.Width, c.Depth, i, w[i], hexF32(t, h))
			}
		}
		if got := sha256F32(w); got != c.SHA256 {
			t.Errorf("seed %d (%d,%d): sha256 %s, numpy %s",
				c.InputSeed, c.Width, c.Depth, got, c.SHA256)
		}
	}
}

func TestWeightsRejectsBadShape(t *testing.T) {
	ws := DeriveV3(1).Weight
	for _, c := range []struct {
		width, depth int
		field        string
	}{{0, 1, "width"}, {-3, 1, "width"}, {4, 0, "depth"}, {4, -1, "depth"}} {
		_, err := Weights(c.width, c.depth, ws)
		if err == nil || !strings.Contains(err.Error(), c.field+" must be positive") {
			t.Errorf("Weights(%d, %d): error %v, want one naming %s",
				c.width, c.depth, err, c.field)
		}
	}
}

// Weights streamed in uneven stretches, and written into a reused array
// holding another MLP's weights, are numpy's.
func TestWeightStreamAndWeightsIntoMatchNumpy(t *testing.T) {
	var buf []float32
	for k, c := range loadVectors(t).Weights {
		ws, err := NewWeightStream(c.Width, c.Depth, DeriveV3(c.InputSeed).Weight)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float32, ws.Len())
		for at, n := 0, 1+k%7; at < len(w); at, n = at+n, n*3 {
			ws.Next(w[at:min(len(w), at+n)])
		}
		if got := sha256F32(w); got != c.SHA256 {
			t.Errorf("stream, seed %d (%d,%d): sha256 %s, numpy %s",
				c.InputSeed, c.Width, c.Depth, got, c.SHA256)
		}
		if buf, err = WeightsInto(buf, c.Width, c.Depth, DeriveV3(c.InputSeed).Weight); err != nil {
			t.Fatal(err)
		}
		if got := sha256F32(buf); got != c.SHA256 {
			t.Errorf("into, seed %d (%d,%d): sha256 %s, numpy %s",
				c.InputSeed, c.Width, c.Depth, got, c.SHA256)
		}
	}
}
