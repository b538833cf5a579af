package seeds

import (
	"math"
	"testing"
)

func TestStandardNormalMatchesNumpy(t *testing.T) {
	v := loadVectors(t)
	tails := 0
	for _, c := range v.NormalF64 {
		g := NewPCG64(NewSeedSequence(c.Seed))
		x := make([]float64, c.N)
		for i := range x {
			x[i] = g.StandardNormal()
		}
		checkTail(t, c,
			func(i int) uint64 { return math.Float64bits(x[i]) },
			func(i int) bool { return math.Abs(x[i]) > zigNorR })
		for i, w := range c.First {
			if math.Float64bits(x[i]) != hexBits(t, w) {
				t.Fatalf("seed %d: normal #%d = %v, numpy %v", c.Seed, i, x[i], hexF64(t, w))
			}
		}
		if got := sha256F64(x); got != c.SHA256 {
			t.Errorf("seed %d: sha256 of %d float64 normals = %s, numpy %s",
				c.Seed, c.N, got, c.SHA256)
		}
		tails += len(c.TailIndex)
	}
	if tails == 0 {
		t.Fatal("the float64 vectors never reach the ziggurat tail")
	}
}

func TestStandardNormalF32MatchesNumpy(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.NormalF32 {
		g := NewPCG64(NewSeedSequence(c.Seed))
		x := make([]float32, c.N)
		g.FillStandardNormalF32(x)
		checkF32(t, c, x, "FillStandardNormalF32")

		g = NewPCG64(NewSeedSequence(c.Seed))
		for i := range x {
			x[i] = g.StandardNormalF32()
		}
		checkF32(t, c, x, "StandardNormalF32")
	}
}

// TestFillStartsOnBufferedHalf starts the float32 stream after a stray
// next_uint32, so the first normal uses numpy's buffered upper half.
func TestFillStartsOnBufferedHalf(t *testing.T) {
	c := loadVectors(t).NormalF32OddOffset
	g := NewPCG64(NewSeedSequence(c.Seed))
	g.NextUint32()
	x := make([]float32, c.N)
	// Uneven pieces: the fill must carry the buffered half across calls.
	for lo, step := 0, 1; lo < len(x); lo, step = lo+step, step*3+1 {
		g.FillStandardNormalF32(x[lo:min(lo+step, len(x))])
	}
	checkF32(t, c, x, "FillStandardNormalF32 in pieces")
}

func TestFillEqualsScalarCalls(t *testing.T) {
	a, b := NewPCG64(NewSeedSequence(11)), NewPCG64(NewSeedSequence(11))
	x := make([]float32, 200000)
	a.FillStandardNormalF32(x)
	for i := range x {
		if y := b.StandardNormalF32(); math.Float32bits(x[i]) != math.Float32bits(y) {
			t.Fatalf("#%d: fill %v, scalar %v", i, x[i], y)
		}
	}
	if a.State() != b.State() {
		t.Fatalf("states differ after the same draws: %+v vs %+v", a.State(), b.State())
	}
}

func checkF32(t *testing.T, c normalVector, x []float32, what string) {
	t.Helper()
	for i, w := range c.First {
		if math.Float32bits(x[i]) != uint32(hexBits(t, w)) {
			t.Fatalf("%s seed %d: normal #%d = %v, numpy %v", what, c.Seed, i, x[i], hexF32(t, w))
		}
	}
	checkTail(t, c,
		func(i int) uint64 { return uint64(math.Float32bits(x[i])) },
		func(i int) bool { return math.Abs(float64(x[i])) > zigNorR })
	if got := sha256F32(x); got != c.SHA256 {
		t.Errorf("%s seed %d: sha256 of %d float32 normals = %s, numpy %s",
			what, c.Seed, c.N, got, c.SHA256)
	}
}

// checkTail compares the draws that came from the ziggurat tail (|x| > r)
// first, so a tail mismatch is reported as such rather than as a hash.
func checkTail(t *testing.T, c normalVector, bitsAt func(int) uint64, isTail func(int) bool) {
	t.Helper()
	for k, i := range c.TailIndex {
		if got, want := bitsAt(i), hexBits(t, c.TailValue[k]); got != want {
			t.Fatalf("seed %d: tail draw #%d bits %x, numpy %x", c.Seed, i, got, want)
		}
	}
	n := 0
	for i := 0; i < c.N; i++ {
		if isTail(i) {
			n++
		}
	}
	if n != len(c.TailIndex) {
		t.Fatalf("seed %d: %d tail draws, numpy %d", c.Seed, n, len(c.TailIndex))
	}
}

func BenchmarkFillStandardNormalF32(b *testing.B) {
	g := NewPCG64(NewSeedSequence(1))
	x := make([]float32, 1<<16)
	b.SetBytes(4 * int64(len(x)))
	for b.Loop() {
		g.FillStandardNormalF32(x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/normal")
}

func BenchmarkStandardNormal(b *testing.B) {
	g := NewPCG64(NewSeedSequence(1))
	for b.Loop() {
		g.StandardNormal()
	}
}
