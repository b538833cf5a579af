package cpukernel

// forwardGeneric is the portable implementation of Forward. For each row it
// keeps the W accumulators in the dst row and sweeps i in the outer loop so that
// w is read row by row; each accumulator still sees i in ascending order.
func forwardGeneric(dst, src []float32, rows, width int, w []float32, mode Mode) {
	for r := 0; r < rows; r++ {
		out := dst[r*width : (r+1)*width]
		in := src[r*width : (r+1)*width]
		clear(out) // the accumulators start at +0
		for i, a := range in {
			wi := w[i*width : (i+1)*width]
			if mode == FMA {
				for j, b := range wi {
					out[j] = FMA32(a, b, out[j])
				}
			} else {
				for j, b := range wi {
					// The conversion rounds the product before the add and
					// forbids fusing the two.
					out[j] = out[j] + float32(a*b)
				}
			}
		}
		relu(out)
	}
}

// relu maps every value that is not > 0, -0 and NaN included, to +0.
func relu(x []float32) {
	for j, v := range x {
		if !(v > 0) {
			x[j] = 0
		}
	}
}

// addColumnSumsGeneric adds rows of x into sums for columns [from, width).
func addColumnSumsGeneric(sums []float64, x []float32, rows, width, from int) {
	for r := 0; r < rows; r++ {
		row := x[r*width : (r+1)*width]
		for j := from; j < width; j++ {
			sums[j] += float64(row[j])
		}
	}
}

// addColumnSquaresGeneric adds squared rows of x into sums for columns [from, width).
func addColumnSquaresGeneric(sums []float64, x []float32, rows, width, from int) {
	for r := 0; r < rows; r++ {
		row := x[r*width : (r+1)*width]
		for j := from; j < width; j++ {
			v := float64(row[j])
			// The product of two float32 values is exact in float64, so only
			// the add rounds; the conversion keeps that explicit.
			sums[j] += float64(v * v)
		}
	}
}
