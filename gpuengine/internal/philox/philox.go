// Package philox is the input sampler of the `philox` algorithm: Philox4x32-10
// counters turned into float32 normals by a fixed sequence of IEEE binary32
// operations. Every sample's inputs are a pure function of (key, sample index),
// and every operation is one an NVRTC kernel can issue with the same rounding:
// __fmul_rn, __fadd_rn, __fdiv_rn, __fsqrt_rn, integer ops. So the CPU twin and
// the GPU engine produce the same bits. docs/ALGORITHM.md is the normative text.
package philox

import "math/bits"

// Philox4x32 round and key-schedule constants, from Salmon et al., SC'11.
const (
	mulA  = 0xD2511F53
	mulB  = 0xCD9E8D57
	weylA = 0x9E3779B9
	weylB = 0xBB67AE85
)

// Block computes Philox4x32-10 of counter c under key k.
func Block(c [4]uint32, k [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
	k0, k1 := k[0], k[1]
	for r := 0; r < 10; r++ {
		if r > 0 {
			k0 += weylA
			k1 += weylB
		}
		hiA, loA := bits.Mul32(mulA, c0)
		hiB, loB := bits.Mul32(mulB, c2)
		c0, c1, c2, c3 = hiB^c1^k0, loB, hiA^c3^k1, loA
	}
	return [4]uint32{c0, c1, c2, c3}
}
