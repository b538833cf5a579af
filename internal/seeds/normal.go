package seeds

import "math"

//go:generate go run ./internal/ziggen -header $NUMPY_SRC/numpy/random/src/distributions/ziggurat_constants.h -out ziggurat_tables.go

// Ziggurat standard normals exactly as numpy's random_standard_normal and
// random_standard_normal_f in numpy/random/src/distributions/distributions.c.
//
// Accept/reject tests compare against exp; see expLess for how the libm's
// last bit is kept out of the decision. Products that feed a sum carry an
// explicit conversion so Go cannot fuse them into an FMA: numpy's x86-64
// build rounds each operation. numpy built by clang for arm64, e.g. macOS,
// fuses the wedge's (f[i-1]-f[i])*u + f[i]; that moves its left side by an
// ulp at most, which flips a decision about as rarely as an exp ulp does.

// StandardNormal is numpy's Generator.standard_normal, the float64 ziggurat.
func (g *PCG64) StandardNormal() float64 {
	for {
		r := g.NextUint64()
		idx := uint8(r)
		rabs := (r >> 9) & 0x000fffffffffffff
		// Flip the sign bit rather than branch: the sign is a coin toss.
		x := math.Float64frombits(math.Float64bits(float64(rabs)*wiDouble[idx]) ^ (r>>8&1)<<63)
		if rabs < kiDouble[idx] {
			return x
		}
		if idx == 0 {
			return g.tail64(rabs>>8&1 != 0)
		}
		y := float64((fiDouble[idx-1]-fiDouble[idx])*g.NextDouble()) + fiDouble[idx]
		if expLess(y, -0.5*x*x) {
			return x
		}
	}
}

// tail64 samples |x| > r by Marsaglia's exponential method; numpy draws
// 1-U so that log never sees 0.
func (g *PCG64) tail64(negative bool) float64 {
	for {
		xx := float64(-zigNorInvR * log1pTail(-g.NextDouble()))
		yy := -log1pTail(-g.NextDouble())
		if yy+yy > xx*xx {
			if negative {
				return -(zigNorR + xx)
			}
			return zigNorR + xx
		}
	}
}

// StandardNormalF32 is numpy's Generator.standard_normal(dtype=float32):
// the float ziggurat on buffered 32-bit draws.
func (g *PCG64) StandardNormalF32() float32 {
	for {
		x, idx, rabs, ok := zigCandidate32(g.NextUint32())
		if ok {
			return x
		}
		if idx == 0 {
			return g.tail32(rabs>>8&1 != 0)
		}
		// numpy computes the wedge's left side in float and exp in double.
		y := float32((fiFloat[idx-1]-fiFloat[idx])*g.NextFloat()) + fiFloat[idx]
		xd := float64(x)
		if expLess(float64(y), -0.5*xd*xd) {
			return x
		}
	}
}

// zigCandidate32 decodes a 32-bit draw into numpy's ziggurat layer idx, the
// magnitude bits rabs and the signed candidate x; ok means x lies inside the
// layer's rectangle and is accepted at once, as 99.3% of draws are.
func zigCandidate32(r uint32) (x float32, idx uint8, rabs uint32, ok bool) {
	idx = uint8(r)
	rabs = (r >> 9) & 0x007fffff
	x = math.Float32frombits(math.Float32bits(float32(rabs)*wiFloat[idx]) ^ (r>>8&1)<<31)
	return x, idx, rabs, rabs < kiFloat[idx]
}

func (g *PCG64) tail32(negative bool) float32 {
	for {
		xx := float32(-zigNorInvRF * log1pfTail(-g.NextFloat()))
		yy := -log1pfTail(-g.NextFloat())
		if yy+yy > xx*xx {
			if negative {
				return -(zigNorRF + xx)
			}
			return zigNorRF + xx
		}
	}
}

// FillStandardNormalF32 fills dst with the same stream as len(dst) calls of
// StandardNormalF32. While no half is buffered, each uint64 gives two
// candidates, low half first as numpy's buffering does; when both are
// accepted at once they are stored straight away. Otherwise the state is
// left before that draw and the scalar code redoes it, so the rare paths
// exist only once.
func (g *PCG64) FillStandardNormalF32(dst []float32) {
	incHi, incLo := g.incHi, g.incLo
	i := 0
	for i < len(dst) {
		if g.hasUint32 || i+1 == len(dst) {
			dst[i] = g.StandardNormalF32()
			i++
			continue
		}
		// numpy's state keeps the last buffered half even once it is used,
		// so track it for State.
		hi, lo, spent := g.stateHi, g.stateLo, g.uinteger
		for ; i+1 < len(dst); i += 2 {
			nhi, nlo := pcgStep(hi, lo, incHi, incLo)
			out := pcgOutput(nhi, nlo)
			x0, _, _, ok0 := zigCandidate32(uint32(out))
			x1, _, _, ok1 := zigCandidate32(uint32(out >> 32))
			if !ok0 || !ok1 {
				break
			}
			dst[i], dst[i+1] = x0, x1
			hi, lo, spent = nhi, nlo, uint32(out>>32)
		}
		g.stateHi, g.stateLo = hi, lo
		g.uinteger = spent
		if i+1 < len(dst) {
			dst[i] = g.StandardNormalF32()
			i++
		}
	}
}
