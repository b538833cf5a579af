package seeds

import "math"

// numpy's ziggurat tails call the C library's log1p and log1pf. Neither is
// correctly rounded, so Go's math.Log1p, a Horner-form fdlibm port, and a
// float32 rounding of it disagree with glibc in the last bit for about 0.04%
// of the tail's inputs in double and 7% in float, which changes the tail
// normals numpy returns. The two functions below re-implement the algorithm
// glibc uses, the fdlibm reduction 1+x = 2^k·(1+f) with glibc's pipelined
// polynomial for double and the Horner polynomial for float, restricted to
// the only arguments the tails pass: x = -u with u a uniform in [0, 1).
//
// Verified against glibc 2.36 of Debian 12 on x86-64: log1pfTail on all 2^24
// possible arguments, log1pTail on 2·10^7 random arguments, no difference;
// tests keep hashes of both. Measured effect on numpy's streams: with
// float32(math.Log1p) instead of log1pfTail, 60 of 5·10^7 float32 normals,
// 0.5% of the tail draws, would differ in the last bit.
// Hosts whose libm computes these differently, such as newer glibc with
// CORE-MATH log1pf or macOS, make numpy itself return different tail values there.
//
// Go may fuse a product into a following sum on arm64 and amd64 v3, even across
// statements, unless the product carries an explicit conversion; every
// product that glibc rounds separately is therefore wrapped in one, and the
// fusions glibc's FMA build does make are spelled out with math.FMA.

// fdlibm's split of ln 2 into a head exact under small multiples and a tail.
const (
	ln2HiF64 = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2LoF64 = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	ln2HiF32 = 6.9313812256e-01           // 0x3f317180
	ln2LoF32 = 9.0580006145e-06           // 0x3717f7d1
)

// Remez coefficients of (log(1+f) - 2s)/s, s = f/(2+f), as in fdlibm.
var (
	lpF64 = [8]float64{0,
		6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
		2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
		1.479819860511658591e-01}
	lpF32 = [8]float32{0,
		6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01,
		2.2222198546e-01, 1.8183572590e-01, 1.5313838422e-01,
		1.4798198640e-01}
)

// log1pTail returns glibc's log1p(x) for x in (-1, 0], as computed by the
// build glibc selects at run time on x86-64 CPUs with FMA and AVX2, every
// one since 2013: GCC contracted some of its products and sums into fused
// multiply-adds, reproduced here with math.FMA. glibc's plain build, used on
// older CPUs, differs from it in the last bit for about 2.4·10^-4 of the
// arguments.
func log1pTail(x float64) float64 {
	hx := int32(math.Float64bits(x) >> 32)
	if hx&0x7fffffff < 0x3e200000 { // |x| < 2^-29: only ±0 and tiny values
		if hx&0x7fffffff < 0x3c900000 {
			return x
		}
		return math.FMA(-(x * x), 0.5, x)
	}
	// Reduce 1+x = 2^k·(1+f) with √2/2 < 1+f < √2; c corrects the
	// rounding of 1+x. For x >= -0.2929, k = 0 and f = x exactly.
	var (
		k       int32
		f, c    float64
		smallF  bool                      // |f| < 2^-20: a short series is accurate enough
		reduced = hx > int32(-0x402d413d) // hx <= (int32)0xbfd2bec3 keeps k = 0
	)
	if !reduced {
		f = x
	} else {
		u := 1.0 + x
		hu := int32(math.Float64bits(u) >> 32)
		k = hu>>20 - 1023
		c = (x - (u - 1.0)) / u
		hu &= 0x000fffff
		lo := math.Float64bits(u) & 0xffffffff
		if hu < 0x6a09e {
			u = math.Float64frombits(uint64(uint32(hu)|0x3ff00000)<<32 | lo)
			smallF = hu == 0
		} else {
			k++
			u = math.Float64frombits(uint64(uint32(hu)|0x3fe00000)<<32 | lo)
			smallF = (0x00100000-hu)>>2 == 0
		}
		f = u - 1.0
	}
	hfsq := float64(float64(0.5*f) * f)
	kf := float64(k)
	if smallF {
		if f == 0 {
			return math.FMA(kf, ln2HiF64, math.FMA(kf, ln2LoF64, c))
		}
		r := float64(math.FMA(-f, 0.66666666666666666, 1.0) * hfsq)
		return math.FMA(kf, ln2HiF64, -((r - math.FMA(kf, ln2LoF64, c)) - f))
	}
	s := f / (2.0 + f)
	z := s * s
	z2 := z * z
	z4 := z2 * z2
	z6 := z2 * z4
	r := math.FMA(z, lpF64[1], z2*math.FMA(z, lpF64[3], lpF64[2]))
	r = math.FMA(z4, math.FMA(z, lpF64[5], lpF64[4]), r)
	r = math.FMA(z6, math.FMA(z, lpF64[7], lpF64[6]), r)
	t := float64((hfsq + r) * s) // glibc does not fuse this product into the sums below
	if !reduced {
		return f - (hfsq - t)
	}
	return math.FMA(kf, ln2HiF64, -((hfsq - (t + math.FMA(kf, ln2LoF64, c))) - f))
}

// log1pfTail returns glibc's log1pf(x) for x in (-1, 0].
func log1pfTail(x float32) float32 {
	hx := int32(math.Float32bits(x))
	if hx&0x7fffffff < 0x31000000 { // |x| < 2^-29
		if hx&0x7fffffff < 0x24800000 {
			return x
		}
		return x - float32(float32(x*x)*0.5)
	}
	var (
		k       int32
		f, c    float32
		smallF  bool
		reduced = hx > int32(-0x416a09e1) // hx <= (int32)0xbe95f61f selects the k=0 branch
	)
	if !reduced {
		f = x
	} else {
		u := 1 + x
		hu := int32(math.Float32bits(u))
		k = hu>>23 - 127
		c = (x - (u - 1)) / u
		hu &= 0x007fffff
		if hu < 0x3504f7 {
			u = math.Float32frombits(uint32(hu) | 0x3f800000)
			smallF = hu == 0
		} else {
			k++
			u = math.Float32frombits(uint32(hu) | 0x3f000000)
			smallF = (0x00800000-hu)>>2 == 0
		}
		f = u - 1
	}
	hfsq := float32(float32(0.5*f) * f)
	kf := float32(k)
	if smallF {
		if f == 0 {
			c += float32(kf * ln2LoF32)
			return float32(kf*ln2HiF32) + c
		}
		r := float32(hfsq * (1 - float32(0.66666666666666666*f)))
		return float32(kf*ln2HiF32) - ((r - (float32(kf*ln2LoF32) + c)) - f)
	}
	s := f / (2 + f)
	z := s * s
	r := lpF32[7]
	for i := 6; i >= 1; i-- {
		r = lpF32[i] + float32(z*r)
	}
	r = float32(r * z)
	if !reduced {
		return f - (hfsq - float32(s*(hfsq+r)))
	}
	return float32(kf*ln2HiF32) - ((hfsq - (float32(s*(hfsq+r)) + (float32(kf*ln2LoF32) + c))) - f)
}
