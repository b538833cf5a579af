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
// dst[r*Width+j]. It runs the AVX-512 or AVX2 kernels where the CPU has them,
// on amd64 without the purego tag, and the portable lane code otherwise;
// WHESTBAKE_CPU_KERNEL can cap the choice through simdcap. All give exactly the bits of
// Block and Pair applied one block at a time.
func (s Sampler) Fill(dst []float32, first int64, rows int) {
	if rows <= 0 || s.Width <= 0 {
		return
	}
	if len(dst) < rows*s.Width {
		panic(fmt.Sprintf(
			"philox: Fill of %d rows × Width %d needs len(dst) ≥ %d, got %d",
			rows,
			s.Width,
			rows*s.Width,
			len(dst),
		))
	}
	if fillSIMD(s, dst, first, rows) {
		return
	}
	s.fillGo(dst, first, rows)
}

// scatter copies the normals of slots t, t+1, …, four per slot in out, into
// their rows of dst, dropping the columns past w of each row's last block.
func scatter(dst, out []float32, t, nb, w int) {
	for len(out) > 0 {
		r, b := t/nb, t%nb
		n := min(nb-b, len(out)/4)
		cols := min(4*n, w-4*b)
		copy(dst[r*w+4*b:r*w+4*b+cols], out[:cols])
		out = out[4*n:]
		t += n
	}
}
