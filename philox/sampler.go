package philox

import "fmt"

// Sampler produces the float32 inputs of one MLP: sample n's input j is
// normal (j mod 4) of Block((n_lo, n_hi, j/4, 0), key), the four normals being
// Pair(w0, w1) and Pair(w2, w3). Nothing depends on how samples are grouped.
type Sampler struct {
	Key   [2]uint32
	Width int
}

// Fill writes rows consecutive samples starting at sample index first into
// dst[r*Width+j]. The assembly kernels (amd64) and the scalar code produce the
// same bits; the kernels are only faster.
func (s Sampler) Fill(dst []float32, first int64, rows int) {
	if rows <= 0 || s.Width <= 0 {
		return
	}
	if len(dst) < rows*s.Width {
		panic(fmt.Sprintf("philox: Fill of %d rows × Width %d needs len(dst) ≥ %d, got %d", rows, s.Width, rows*s.Width, len(dst)))
	}
	if fillSIMD(s, dst, first, rows) {
		return
	}
	s.fillScalar(dst, first, rows)
}

// fillScalar is the reference: one Block and two Pairs per four columns.
func (s Sampler) fillScalar(dst []float32, first int64, rows int) {
	w := s.Width
	for r := 0; r < rows; r++ {
		n := uint64(first) + uint64(r)
		row := dst[r*w : r*w+w]
		for blk := 0; blk*4 < w; blk++ {
			out := Block([4]uint32{uint32(n), uint32(n >> 32), uint32(blk), 0}, s.Key)
			z0, z1 := Pair(out[0], out[1])
			z2, z3 := Pair(out[2], out[3])
			j := blk * 4
			switch w - j {
			case 1:
				row[j] = z0
			case 2:
				row[j], row[j+1] = z0, z1
			case 3:
				row[j], row[j+1], row[j+2] = z0, z1, z2
			default:
				row[j], row[j+1], row[j+2], row[j+3] = z0, z1, z2, z3
			}
		}
	}
}
