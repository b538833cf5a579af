package seeds

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
)

// GenerateInputSeeds returns n distinct int63 input seeds in [0, 2^63), so
// they fit whestbench's int64 mlp_seed column. With seed nil they come from
// the OS CSPRNG, like whestbench's secrets.randbits(63); otherwise from a
// PCG64 seeded by SeedSequence(*seed), each NextUint64()>>1, so a seeds file
// can be regenerated. Repeats are skipped; like whestbench, at most 10n
// draws are made.
func GenerateInputSeeds(n int, seed *uint64) ([]int64, error) {
	if n < 0 {
		return nil, fmt.Errorf("seeds: n must be non-negative, got %d", n)
	}
	draw := osDraw
	if seed != nil {
		g := NewPCG64(NewSeedSequence(*seed))
		draw = func() uint64 { return g.NextUint64() }
	}
	out := make([]int64, 0, n)
	seen := make(map[int64]struct{}, n)
	for attempt := 0; len(out) < n; attempt++ {
		if attempt >= 10*n {
			return nil, fmt.Errorf("seeds: failed to generate %d distinct seeds in %d attempts",
				n, 10*n)
		}
		s := int64(draw() >> 1)
		if _, dup := seen[s]; dup {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out, nil
}

// osDraw returns 64 bits from the OS CSPRNG; crypto/rand.Read does not fail
// on supported platforms: it aborts the program instead.
func osDraw() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
