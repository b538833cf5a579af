package philox

// fillScalar is the reference the fast paths are tested against: the loop of
// docs/ALGORITHM.md, one Block and two Pairs per four columns.
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
