package cpukernel

import (
	"math"
	"math/bits"
)

// FMA32 returns a*b+c rounded once to float32, to nearest even with gradual
// underflow: the IEEE 754 fusedMultiplyAdd on binary32, in pure Go.
//
// The float64 product of two float32 values is exact: 24+24 significant bits fit
// in 53. The float64 sum is then rounded to odd instead of to nearest: truncated,
// with its last bit set if it is inexact. Rounding to odd at p+2 or more bits and
// then to nearest at 24 bits equals one rounding to nearest, as Boldo & Melquiond
// 2008 show, which a plain float32(float64 sum) would not be on near-halfway cases.
func FMA32(a, b, c float32) float32 {
	// The explicit conversions forbid the compiler from fusing these operations;
	// each must be rounded on its own for the error analysis to hold.
	p := float64(float64(a) * float64(b))
	cd := float64(c)
	s := float64(p + cd)
	// Knuth's TwoSum: err is the exact rounding error, s + err == p + c.
	t := float64(s - p)
	err := float64(float64(p-float64(s-t)) + float64(cd-t))

	// Branch-free, as the branches would mispredict about half the time:
	// inexact = 1 iff err is neither ±0 nor NaN. err is NaN exactly when s is
	// Inf or NaN, which pass through unchanged.
	sb, eb := math.Float64bits(s), math.Float64bits(err)
	_, inexact := bits.Sub64(eb<<1-1, 0x7FF<<53, 0)
	// s was rounded away from zero iff err has the other sign; truncating it
	// then means one step down in magnitude in the sign-magnitude encoding.
	// A sum that rounds to zero is exact, so s is never a zero being stepped.
	awayFromZero := (eb ^ sb) >> 63
	sb = (sb - awayFromZero&inexact) | inexact
	return float32(math.Float64frombits(sb))
}
