package cpukernel

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// numpyVectors are expected values computed by numpy (testdata/gen_numpy_vectors.py).
type numpyVectors struct {
	MulAdd  []numpyCase `json:"muladd"`
	Columns []numpyCase `json:"columns"`
}

type numpyCase struct {
	Rows, Width   int
	Kind          string
	X, W, Want    string
	Sums, Squares string
}

func loadNumpyVectors(t *testing.T) numpyVectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/numpy_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v numpyVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("testdata/numpy_vectors.json: %v", err)
	}
	if len(v.MulAdd) == 0 || len(v.Columns) == 0 {
		t.Fatal("testdata/numpy_vectors.json has no cases; regenerate it with gen_numpy_vectors.py")
	}
	return v
}

func (c numpyCase) bytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("numpy case %dx%d: %v", c.Rows, c.Width, err)
	}
	return b
}

func (c numpyCase) f32(t *testing.T, s string) []float32 {
	b := c.bytes(t, s)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func (c numpyCase) f64(t *testing.T, s string) []float64 {
	b := c.bytes(t, s)
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

func diffBits64(t *testing.T, label string, got, want []float64) {
	t.Helper()
	for k := range want {
		if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
			t.Fatalf("%s: column %d = %g, want %g", label, k, got[k], want[k])
		}
	}
}

// numpy's x.astype(float64).sum(0), as whestbench calls it, is the truth for the
// order of the column sums.
func TestColumnStatsMatchNumpy(t *testing.T) {
	for _, c := range loadNumpyVectors(t).Columns {
		x := c.f32(t, c.X)
		sums := make([]float64, c.Width)
		AddColumnSums(sums, x, c.Rows, c.Width)
		diffBits64(t, fmt.Sprintf("sums %dx%d", c.Rows, c.Width), sums, c.f64(t, c.Sums))
		sq := make([]float64, c.Width)
		AddColumnSquares(sq, x, c.Rows, c.Width)
		diffBits64(t, fmt.Sprintf("squares %dx%d", c.Rows, c.Width), sq, c.f64(t, c.Squares))
	}
}

// Against the plain scalar loop for widths that hit the 32-column blocks, the
// 4-column blocks and the scalar tail; sums start non-zero so the existing
// value must be the first addend.
func TestColumnStatsMatchScalarLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, width := range []int{1, 3, 4, 5, 31, 32, 33, 36, 64, 67, 100, 256} {
		for _, rows := range []int{0, 1, 2, 17} {
			x := make([]float32, rows*width)
			for i := range x {
				x[i] = float32(math.Ldexp(rng.NormFloat64(), rng.IntN(80)-40))
			}
			init := make([]float64, width)
			for j := range init {
				init[j] = math.Ldexp(rng.NormFloat64(), rng.IntN(60)-30)
			}
			wantS, wantQ := append([]float64(nil), init...), append([]float64(nil), init...)
			for r := 0; r < rows; r++ {
				for j := 0; j < width; j++ {
					v := float64(x[r*width+j])
					wantS[j] += v
					wantQ[j] += float64(v * v)
				}
			}
			gotS, gotQ := append([]float64(nil), init...), append([]float64(nil), init...)
			AddColumnSums(gotS, x, rows, width)
			AddColumnSquares(gotQ, x, rows, width)
			diffBits64(t, fmt.Sprintf("sums %dx%d", rows, width), gotS, wantS)
			diffBits64(t, fmt.Sprintf("squares %dx%d", rows, width), gotQ, wantQ)
		}
	}
}
