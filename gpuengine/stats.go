package gpuengine

// finish turns the per-layer float64 sums into whestbench's statistics:
// means are float32(sum/N); avg_variance = mean_j(sumsq_j/N − float64(final_j)²)
// with numpy's pairwise summation inside the mean, as in simulation.py.
func finish(layerSums, sumSquares []float64, n int64, width int) Result {
	means := make([]float32, len(layerSums))
	nf := float64(n)
	for i, s := range layerSums {
		means[i] = float32(s / nf)
	}
	final := means[len(means)-width:]
	terms := make([]float64, width)
	for j := range terms {
		m := float64(final[j])
		terms[j] = sumSquares[j]/nf - float64(m*m)
	}
	return Result{LayerMeans: means, AvgVariance: pairwiseSum(terms) / float64(width)}
}

// pairwiseSum is numpy's pairwise summation of float64 in loops_utils.h.src:
// fewer than 8 terms left to right; up to 128 with eight interleaved partial
// sums combined as a tree; beyond that, halves split at a multiple of 8.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		s := 0.0
		for _, v := range a {
			s += v
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for k := 0; k < 8; k++ {
				r[k] += a[i+k]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}
