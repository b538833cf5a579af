package cpukernel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is the independent reference: a*b+c computed exactly with
// math/big and rounded once by big.Float.Float32 (round to nearest even,
// gradual underflow). Non-finite inputs follow IEEE 754 propagation, which
// float64 arithmetic already implements exactly for them.
type exactFMA32 struct{ x, y, z big.Float }

func newExactFMA32() *exactFMA32 {
	r := &exactFMA32{}
	// float32 products and sums span 2^-298..2^257: 1024 bits hold them exactly.
	for _, f := range []*big.Float{&r.x, &r.y, &r.z} {
		f.SetPrec(1024).SetMode(big.ToNearestEven)
	}
	return r
}

func (r *exactFMA32) fma(a, b, c float32) float32 {
	if isInf32(a) || isInf32(b) || isInf32(c) || a != a || b != b || c != c {
		return float32(float64(a)*float64(b) + float64(c))
	}
	r.x.SetFloat64(float64(a))
	r.y.SetFloat64(float64(b))
	r.x.Mul(&r.x, &r.y)
	r.z.SetFloat64(float64(c))
	r.x.Add(&r.x, &r.z)
	if r.x.Sign() == 0 {
		// IEEE 754 §6.3: an exact zero sum is +0 in round-to-nearest unless
		// both addends are -0.
		prodNeg := math.Signbit(float64(a)) != math.Signbit(float64(b))
		if prodNeg && math.Signbit(float64(c)) {
			return float32(math.Copysign(0, -1))
		}
		return 0
	}
	f, _ := r.x.Float32()
	return f
}

func isInf32(v float32) bool { return math.IsInf(float64(v), 0) }

// sameFloat32 compares bits, treating all NaNs as equal.
func sameFloat32(a, b float32) bool {
	if a != a && b != b {
		return true
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// The reference itself must round subnormal results correctly, or it could not
// judge FMA32; these are checked against hand-computed values.
func TestExactReferenceAnchors(t *testing.T) {
	ref := newExactFMA32()
	tiny := float32(math.SmallestNonzeroFloat32) // 2^-149
	half := float32(math.Ldexp(1, -75))          // half*half = 2^-150, half of tiny
	cases := []struct {
		a, b, c, want float32
	}{
		{1, 2, 3, 5},
		{half, half, 0, 0},                        // exactly half of 2^-149: ties to even 0
		{half, half, tiny, 2 * tiny},              // 1.5 * 2^-149: ties to even 2 * 2^-149
		{half * (1 + 1.0/(1<<23)), half, 0, tiny}, // just above half: rounds up
		{-half, half, 0, float32(math.Copysign(0, -1))},
		{1, 1, -1, 0},
		{
			float32(math.Copysign(0, -1)),
			1,
			float32(math.Copysign(0, -1)),
			float32(math.Copysign(0, -1)),
		},
		{math.MaxFloat32, 2, 0, float32(math.Inf(1))},
		// 1 + 2^-24 + 2^-60 lies just above the midpoint of 1 and 1+2^-23.
		{1 + 1.0/(1<<12), 1 - 1.0/(1<<12), float32(math.Ldexp(1, -24)), 1},
	}
	for _, c := range cases {
		if got := ref.fma(c.a, c.b, c.c); !sameFloat32(got, c.want) {
			t.Errorf(
				"reference fma(%g, %g, %g) = %g (%#x), want %g (%#x)",
				c.a,
				c.b,
				c.c,
				got,
				math.Float32bits(got),
				c.want,
				math.Float32bits(c.want),
			)
		}
	}
}

// tripleSource yields random and adversarial (a, b, c) triples.
type tripleSource struct{ rng *rand.Rand }

// randomBits draws any float32 bit pattern: all exponents, subnormals, zeros,
// infinities and NaNs.
func (s tripleSource) randomBits() float32 { return math.Float32frombits(s.rng.Uint32()) }

// nearMidpoint builds a*b + c within a hair of a float32 midpoint, where
// rounding the float64 sum to nearest before rounding to float32 goes wrong:
// a = 2^ka(1+k·2^-23), b = 2^kb(1-k·2^-23) make a*b = 2^K(1-k²·2^-46), a hair
// below 2^K, and c is a float32 whose ulp is 2^(K+1), so c + 2^K is a midpoint.
// Random signs put the exact value on either side of it; k = 0 gives exact ties.
func (s tripleSource) nearMidpoint() (a, b, c float32) {
	k := float64(s.rng.IntN(362))
	K := s.rng.IntN(100+150+1) - 150 // c's ulp 2^(K+1) from the smallest subnormal up
	lo, hi := max(-126, K-126), min(126, K+125)
	if lo > hi {
		lo, hi = hi, lo
	}
	ka := lo + s.rng.IntN(hi-lo+1)
	kb := K - ka
	a = float32(math.Ldexp(1+k*0x1p-23, ka))
	b = float32(math.Ldexp(1-k*0x1p-23, kb))
	var m float64
	if K+1 == -149 && s.rng.IntN(2) == 0 {
		m = float64(1 + s.rng.IntN(1<<23)) // subnormal c
	} else {
		m = float64(1<<23 + s.rng.IntN(1<<23))
	}
	c = float32(math.Ldexp(m, K+1))
	if s.rng.IntN(2) == 0 {
		a = -a
	}
	if s.rng.IntN(2) == 0 {
		c = -c
	}
	return a, b, c
}

// cancelling builds c = -round(a*b), so the result is the exact rounding error
// of the float32 product (or its underflowed rounding).
func (s tripleSource) cancelling() (a, b, c float32) {
	a = float32(math.Ldexp(s.rng.Float64()+0.5, s.rng.IntN(120)-60))
	b = float32(math.Ldexp(s.rng.Float64()+0.5, s.rng.IntN(120)-60))
	return a, b, -(a * b)
}

// sameScale draws c near a*b so that carries and partial cancellation happen.
func (s tripleSource) sameScale() (a, b, c float32) {
	a = float32(s.rng.NormFloat64())
	b = float32(s.rng.NormFloat64())
	c = float32(float64(a) * float64(b) * (s.rng.Float64()*4 - 2))
	return a, b, c
}

func (s tripleSource) next(i int) (a, b, c float32) {
	switch i % 4 {
	case 0:
		return s.randomBits(), s.randomBits(), s.randomBits()
	case 1:
		return s.nearMidpoint()
	case 2:
		return s.cancelling()
	}
	return s.sameScale()
}

func TestFMA32AgainstExactReference(t *testing.T) {
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	ref := newExactFMA32()
	src := tripleSource{rand.New(rand.NewPCG(20080101, 7))}
	bad := 0
	for i := 0; i < n; i++ {
		a, b, c := src.next(i)
		want := ref.fma(a, b, c)
		if got := FMA32(a, b, c); !sameFloat32(got, want) {
			bad++
			if bad <= 10 {
				t.Errorf("FMA32(%x, %x, %x) = %x, want %x (a=%g b=%g c=%g)",
					math.Float32bits(a), math.Float32bits(b), math.Float32bits(c),
					math.Float32bits(got), math.Float32bits(want), a, b, c)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d triples wrong", bad, n)
	}
}

// The naive float32(float64(a)*float64(b)+float64(c)) rounds twice; the
// midpoint generator must actually produce cases where that differs from one
// rounding, or it would not be testing the round-to-odd step.
func TestMidpointGeneratorDefeatsDoubleRounding(t *testing.T) {
	ref := newExactFMA32()
	src := tripleSource{rand.New(rand.NewPCG(3, 3))}
	differ := 0
	for i := 0; i < 10000; i++ {
		a, b, c := src.nearMidpoint()
		naive := float32(float64(float64(a)*float64(b)) + float64(c))
		if !sameFloat32(naive, ref.fma(a, b, c)) {
			differ++
		}
	}
	if differ < 1000 {
		t.Fatalf(
			"only %d of 10000 near-midpoint triples defeat double rounding; "+
				"the generator is too weak",
			differ,
		)
	}
}
