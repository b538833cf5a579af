package seeds

import (
	"math"
	"math/big"
)

// expLess reports y < e^t as numpy's ziggurat wedge test computes it, with
// exp taken as correctly rounded.
//
// numpy calls the C library's exp. Go's math.Exp differs from glibc's by one
// ulp for about 9% of the wedge arguments, glibc's own exp differs from the
// correctly rounded value for about 0.08% of them. A one-ulp difference only
// matters when y lies within an ulp of e^t, but then the accept decision
// flips and the rest of the stream shifts, so near-ties are settled against
// the correctly rounded exp: that agrees with glibc, and any libm that is
// correct there, everywhere except on ~0.08% of the ~2^-29 near-ties.
// Measured on 5.9·10^6 float64 and 5.9·10^6 float32 wedge tests: no y came
// within 4 ulps of e^t, so the slow path below is effectively never taken.
func expLess(y, t float64) bool {
	e := math.Exp(t)
	// math.Exp is within one ulp, so outside this band the decision is the
	// same for every faithful exp.
	if d := y - e; math.Abs(d) > e*0x1p-50 {
		return d < 0
	}
	return y < expCorrectlyRounded(t)
}

// expPrec is far beyond the closeness of any float64 exp argument to a
// rounding boundary: the worst cases are within about 2^-113 relative.
const expPrec = 320

// expCorrectlyRounded returns e^t rounded to nearest float64, for finite
// t <= 0 of moderate size: the ziggurat passes t in [-7, 0]. It sums the
// Taylor series of e^|t|, whose terms are all positive, and inverts.
func expCorrectlyRounded(t float64) float64 {
	a := new(big.Float).SetPrec(expPrec).SetFloat64(-t)
	sum := new(big.Float).SetPrec(expPrec).SetInt64(1)
	term := new(big.Float).SetPrec(expPrec).SetInt64(1)
	n := new(big.Float).SetPrec(expPrec)
	for i := int64(1); ; i++ {
		term.Mul(term, a)
		term.Quo(term, n.SetInt64(i))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-expPrec {
			break
		}
	}
	one := new(big.Float).SetPrec(expPrec).SetInt64(1)
	f, _ := new(big.Float).SetPrec(expPrec).Quo(one, sum).Float64()
	return f
}
