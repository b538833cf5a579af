package seeds

import (
	"math"
	"testing"
)

// TestLog1pfTailAllArguments checks log1pfTail against glibc's log1pf on every
// argument the float tail can pass (-k·2^-24, k < 2^24), via a hash.
func TestLog1pfTailAllArguments(t *testing.T) {
	want := loadVectors(t).Libm.Log1pfAllSHA256
	out := make([]float32, 1<<24)
	for k := range out {
		out[k] = log1pfTail(-float32(k) * (1.0 / (1 << 24)))
	}
	if got := sha256F32(out); got != want {
		for k := range out { // name one disagreeing argument if the naive form differs too
			naive := float32(math.Log1p(-float64(k) / (1 << 24)))
			if out[k] != naive {
				t.Logf("e.g. k=%d: log1pfTail=%v, float32(math.Log1p)=%v", k, out[k], naive)
				break
			}
		}
		t.Fatalf("sha256 of log1pfTail over all 2^24 tail arguments = %s, glibc %s", got, want)
	}
}

func TestLog1pTailMatchesGlibc(t *testing.T) {
	l := loadVectors(t).Libm
	out := make([]float64, l.Log1pSplitmixN)
	for i := range out {
		u := float64(splitmix64(uint64(i))>>11>>(i%48)) * 0x1p-53
		out[i] = log1pTail(-u)
	}
	if got := sha256F64(out); got != l.Log1pSplitmixSHA256 {
		t.Errorf("sha256 of log1pTail over %d splitmix arguments = %s, glibc %s",
			len(out), got, l.Log1pSplitmixSHA256)
	}
	if len(l.Log1pEdges) == 0 {
		t.Fatal("no log1p edge vectors")
	}
	for _, e := range l.Log1pEdges {
		u, want := hexF64(t, e[0]), hexF64(t, e[1])
		if got := log1pTail(-u); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("log1pTail(-%v) = %v, glibc %v", u, got, want)
		}
	}
}

// splitmix64 is the argument generator shared with gen_vectors.py.
func splitmix64(i uint64) uint64 {
	z := (i + 1) * 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func TestExpCorrectlyRounded(t *testing.T) {
	cases := loadVectors(t).Libm.ExpCorrectlyRounded
	goDiffers := 0
	for _, c := range cases {
		arg, want := hexF64(t, c[0]), hexF64(t, c[1])
		if got := expCorrectlyRounded(arg); got != want {
			t.Errorf("expCorrectlyRounded(%v) = %v, decimal arithmetic %v", arg, got, want)
		}
		if math.Exp(arg) != want {
			goDiffers++
		}
	}
	// The test only means something if math.Exp is sometimes off by an ulp.
	if goDiffers == 0 {
		t.Fatalf("math.Exp was correctly rounded on all %d arguments; pick harder ones", len(cases))
	}
	t.Logf("math.Exp differs from the correctly rounded exp on %d of %d arguments",
		goDiffers, len(cases))
}

// TestExpLessNearTies puts y exactly on and next to the correctly rounded
// exp(t) where math.Exp is off by an ulp, which forces the exact path.
func TestExpLessNearTies(t *testing.T) {
	tried := 0
	for _, c := range loadVectors(t).Libm.ExpCorrectlyRounded {
		arg, cr := hexF64(t, c[0]), hexF64(t, c[1])
		if math.Exp(arg) == cr {
			continue
		}
		tried++
		below, above := math.Nextafter(cr, 0), math.Nextafter(cr, 2)
		if expLess(cr, arg) || !expLess(below, arg) || expLess(above, arg) {
			t.Fatalf("expLess near exp(%v)=%v: at %v, below %v, above %v", arg, cr,
				expLess(cr, arg), expLess(below, arg), expLess(above, arg))
		}
	}
	if tried == 0 {
		t.Fatal("no argument where math.Exp is off by an ulp")
	}
}
