package seeds

// Constants of numpy's SeedSequence, in numpy/random/bit_generator.pyx.
const (
	poolSize  = 4
	initA     = 0x43b0d7e5
	multA     = 0x931e8875
	initB     = 0x8b51f9dd
	multB     = 0x58f38ded
	mixMultL  = 0xca01f9dd
	mixMultR  = 0x4973f715
	mixXShift = 16
)

// SeedSequence mirrors numpy.random.SeedSequence with pool_size 4 for an
// integer entropy. It is a value: copies are independent, and Spawn never
// mutates the parent: whestbench builds a fresh SeedSequence per call, so the
// children of one parent are always numbered from 0. Build one with
// NewSeedSequence: the zero value is not SeedSequence(0).
type SeedSequence struct {
	entropy  uint64
	spawnKey []uint32
	pool     [poolSize]uint32
}

// NewSeedSequence returns SeedSequence(entropy, spawn_key=spawnKey).
func NewSeedSequence(entropy uint64, spawnKey ...uint32) SeedSequence {
	s := SeedSequence{entropy: entropy, spawnKey: append([]uint32(nil), spawnKey...)}
	s.pool = mixEntropy(s.assembledEntropy())
	return s
}

// Entropy returns the integer entropy the sequence was built from.
func (s SeedSequence) Entropy() uint64 { return s.entropy }

// SpawnKey returns a copy of the sequence's spawn key.
func (s SeedSequence) SpawnKey() []uint32 { return append([]uint32(nil), s.spawnKey...) }

// Spawn returns n children with spawn keys (spawnKey..., i) for i = 0..n-1.
func (s SeedSequence) Spawn(n int) []SeedSequence {
	children := make([]SeedSequence, n)
	key := make([]uint32, len(s.spawnKey)+1)
	copy(key, s.spawnKey)
	for i := range children {
		key[len(s.spawnKey)] = uint32(i)
		children[i] = NewSeedSequence(s.entropy, key...)
	}
	return children
}

// GenerateState32 returns generate_state(n, dtype=uint32).
func (s SeedSequence) GenerateState32(n int) []uint32 {
	out := make([]uint32, n)
	h := uint32(initB)
	for i := range out {
		v := s.pool[i%poolSize] ^ h
		h *= multB
		v *= h
		out[i] = v ^ v>>mixXShift
	}
	return out
}

// GenerateState64 returns generate_state(n, dtype=uint64): 2n uint32 words
// paired little-endian.
func (s SeedSequence) GenerateState64(n int) []uint64 {
	w := s.GenerateState32(2 * n)
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(w[2*i]) | uint64(w[2*i+1])<<32
	}
	return out
}

// assembledEntropy is numpy's get_assembled_entropy for an integer entropy:
// little-endian 32-bit words of the integer, [0] for 0, zero-padded to the
// pool size when a spawn key follows, then one word per spawn-key element.
func (s SeedSequence) assembledEntropy() []uint32 {
	words := []uint32{uint32(s.entropy)}
	if hi := uint32(s.entropy >> 32); hi != 0 {
		words = append(words, hi)
	}
	if len(s.spawnKey) > 0 {
		for len(words) < poolSize {
			words = append(words, 0)
		}
	}
	return append(words, s.spawnKey...)
}

// mixEntropy is numpy's SeedSequence.mix_entropy on a zero pool.
func mixEntropy(entropy []uint32) [poolSize]uint32 {
	var pool [poolSize]uint32
	hashConst := uint32(initA)
	hashmix := func(v uint32) uint32 {
		v ^= hashConst
		hashConst *= multA
		v *= hashConst
		return v ^ v>>mixXShift
	}
	for i := range pool {
		if i < len(entropy) {
			pool[i] = hashmix(entropy[i])
		} else {
			pool[i] = hashmix(0)
		}
	}
	for src := range pool {
		for dst := range pool {
			if src != dst {
				pool[dst] = mix(pool[dst], hashmix(pool[src]))
			}
		}
	}
	for src := poolSize; src < len(entropy); src++ {
		for dst := range pool {
			pool[dst] = mix(pool[dst], hashmix(entropy[src]))
		}
	}
	return pool
}

func mix(x, y uint32) uint32 {
	r := mixMultL*x - mixMultR*y
	return r ^ r>>mixXShift
}
