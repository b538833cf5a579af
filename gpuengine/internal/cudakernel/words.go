package cudakernel

import "github.com/whestbake/whestbake/gpuengine/internal/exact"

// Digits is the number of 32-bit digits of a 192-bit total, WB_DIGITS in fixed.cuh.
const Digits = 6

// DecodeWords folds the kernels' carry-save words into exact totals: word d of value v,
// at d·nv + v, holds a sum of 32-bit digits of weight 2^(32d), so value v is
// Σ_d word·2^(32d) modulo 2^192, the exact.Acc ring.
func DecodeWords(words []uint64, nv int) []exact.Acc {
	out := make([]exact.Acc, nv)
	for v := range out {
		for d := 0; d < Digits; d++ {
			out[v].AddAcc(shifted(words[d*nv+v], 32*d))
		}
	}
	return out
}

// shifted returns x·2^s modulo 2^192 for s < 192.
func shifted(x uint64, s int) exact.Acc {
	var a exact.Acc
	limb, off := s/64, uint(s%64)
	a[limb] = x << off
	if off != 0 && limb+1 < len(a) {
		a[limb+1] = x >> (64 - off)
	}
	return a
}
