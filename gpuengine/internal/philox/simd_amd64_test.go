//go:build amd64 && !purego

package philox

// Register every assembly kernel this CPU runs with the fast-path tests.
func init() {
	for _, k := range kernels {
		impls = append(impls, impl{k.name, k.fill, func(ra, rb []uint32) ([]float32, []float32) { return normalsOf(k, ra, rb) }})
	}
}

// normalsOf runs the kernel's Box–Muller routine on word pairs (ra[i], rb[i]),
// two pairs per slot, and returns Pair's two outputs for each.
func normalsOf(k kernel, ra, rb []uint32) (z0, z1 []float32) {
	lane := make([]int, k.lanes) // inverse of laneSlot
	for l := range lane {
		lane[laneSlot(l, k.lanes)] = l
	}
	groups := (len(ra) + 2*k.lanes - 1) / (2 * k.lanes)
	words := make([]uint32, groups*4*k.lanes)
	for i := range ra {
		slot, second := i/2, i%2
		base := slot/k.lanes*4*k.lanes + 2*second*k.lanes + lane[slot%k.lanes]
		words[base], words[base+k.lanes] = ra[i], rb[i]
	}
	out := make([]float32, groups*4*k.lanes)
	k.normals(&out[0], &words[0], groups)
	z0, z1 = make([]float32, len(ra)), make([]float32, len(ra))
	for i := range ra {
		z0[i], z1[i] = out[2*i], out[2*i+1]
	}
	return z0, z1
}
