package philox

import (
	"math"
	"math/bits"
)

// Box–Muller on one Philox word pair, written as explicit binary32 operations.
// Go may fuse x*y+z into an FMA on some targets; wrapping every product in
// float32(...) forbids that, as the Go spec's "Floating-point operators" says, which keeps the
// CPU twin identical to the kernel's __fmul_rn/__fadd_rn sequence. Constants are
// given by their bits so docs/ALGORITHM.md and the CUDA source state the same values.

var f32 = math.Float32frombits

var (
	ln2Hi = f32(0x3f317200) // 0.693145751953125, ln 2 to 16 significant bits
	ln2Lo = f32(0x35bfbe8e) // ln 2 − ln2Hi
)

// logCoef: ln f = 2·atanh(s) = s·(2 + 2s²/3 + 2s⁴/5 + …), s = (f−1)/(f+1); Horner in s²
// from the highest term. |s| ≤ 0.1716, so the omitted 2s¹³/13 is below 2e-11.
var logCoef = [6]float32{
	f32(0x3e3a2e8c), // 2/11
	f32(0x3e638e39), // 2/9
	f32(0x3e924925), // 2/7
	f32(0x3ecccccd), // 2/5
	f32(0x3f2aaaab), // 2/3
	f32(0x40000000), // 2
}

// sinCoef: sin(π/2·v) = v·Σ_k c_k·(v²)^k, Taylor coefficients (−1)^k (π/2)^(2k+1)/(2k+1)!,
// highest first; for v ∈ [0, 1] the omitted k = 7 term is below 1e-9.
var sinCoef = [7]float32{
	f32(0x33747a1a), // (π/2)^13/13!
	f32(0xb67183a8), // −(π/2)^11/11!
	f32(0x39283c1a), // (π/2)^9/9!
	f32(0xbb996966), // −(π/2)^7/7!
	f32(0x3da335e3), // (π/2)^5/5!
	f32(0xbf255de7), // −(π/2)^3/3!
	f32(0x3fc90fdb), // π/2
}

// radius returns sqrt(−2·ln u) for u = (2r+1)·2^-33 ∈ (0, 1): no word gives u = 0 or 1,
// and r = 0 gives the largest radius, √(66 ln 2) ≈ 6.77.
func radius(r uint32) float32 {
	m := uint64(r)<<1 | 1 // u = m·2^-33, m odd
	e := 63 - bits.LeadingZeros64(m)
	// Write u = 2^(e−33)·f with f = m/2^e ∈ [1, 2), folded to [1/√2, √2] by
	// halving when its top 24 bits exceed those of √2, 0xb504f3. Then
	// s = (f−1)/(f+1) = (m−2^e)/(m+2^e): both integers are exact, so s loses nothing
	// even for u near 1, where −ln u is tiny.
	var top uint64
	if e >= 23 {
		top = m >> uint(e-23)
	} else {
		top = m << uint(23-e)
	}
	if top > 0xb504f3 {
		e++
	}
	p2 := uint64(1) << uint(e)
	// Two rounded conversions, one rounded division.
	s := float32(int64(m)-int64(p2)) / float32(m+p2)
	s2 := float32(s * s)
	p := logCoef[0]
	for _, c := range logCoef[1:] {
		p = float32(float32(p*s2) + c)
	}
	lnf := float32(p * s)
	k := float32(e - 33) // ln u = k·ln 2 + ln f, k ∈ [−33, 0]
	lnu := float32(float32(k*ln2Hi) + float32(float32(k*ln2Lo)+lnf))
	// sqrt in float64 then float32 is correctly rounded, as 53 ≥ 2·24+2.
	return float32(math.Sqrt(float64(float32(-2 * lnu))))
}

// sinHalfPi returns sin(π/2·v) for v ∈ [0, 1].
func sinHalfPi(v float32) float32 {
	v2 := float32(v * v)
	p := sinCoef[0]
	for _, c := range sinCoef[1:] {
		p = float32(float32(p*v2) + c)
	}
	return float32(p * v)
}

// Pair maps two Philox words to two independent standard normals: ra sets the
// radius, rb the angle: 2 bits of quadrant, 23 bits within it.
func Pair(ra, rb uint32) (float32, float32) {
	rad := radius(ra)
	a := (rb >> 7) & 0x7fffff
	v := float32(2*a+1) * (1.0 / (1 << 24)) // odd multiple of 2^-24 in (0, 1): exact
	s := sinHalfPi(v)
	c := sinHalfPi(1 - v) // cos(π/2·v); 1−v is exact
	switch rb >> 30 {
	case 1:
		c, s = -s, c
	case 2:
		c, s = -c, -s
	case 3:
		c, s = s, -c
	}
	return float32(rad * c), float32(rad * s)
}
