package naming

// mt19937 is CPython's random.Random core (Modules/_randommodule.c). Faker seeds a fresh
// random.Random per name, so reproducing whestbench's names needs this exact generator,
// its integer seeding and its 53-bit random(), not just "an MT19937".
type mt19937 struct {
	state [mtN]uint32
	index int
}

const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// seedPython seeds like random.Random(n) for a non-negative integer n: the key is n's
// 32-bit little-endian words, with a single zero word for n == 0.
func (m *mt19937) seedPython(n uint64) {
	key := [2]uint32{uint32(n), uint32(n >> 32)}
	words := 1
	if n>>32 != 0 {
		words = 2
	}
	m.initByArray(key[:words])
}

func (m *mt19937) initGenrand(s uint32) {
	m.state[0] = s
	for i := 1; i < mtN; i++ {
		prev := m.state[i-1]
		m.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	m.index = mtN
}

func (m *mt19937) initByArray(key []uint32) {
	m.initGenrand(19650218)
	i, j := 1, 0
	for k := max(mtN, len(key)); k > 0; k-- {
		prev := m.state[i-1]
		m.state[i] = (m.state[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			m.state[0] = m.state[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := mtN - 1; k > 0; k-- {
		prev := m.state[i-1]
		m.state[i] = (m.state[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			m.state[0] = m.state[mtN-1]
			i = 1
		}
	}
	// The reference sets the top bit so the state can never be all zero.
	m.state[0] = 0x80000000
}

func (m *mt19937) uint32() uint32 {
	if m.index >= mtN {
		m.twist()
	}
	y := m.state[m.index]
	m.index++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

func (m *mt19937) twist() {
	for k := 0; k < mtN; k++ {
		y := (m.state[k] & mtUpperMask) | (m.state[(k+1)%mtN] & mtLowerMask)
		next := m.state[(k+mtM)%mtN] ^ (y >> 1)
		if y&1 != 0 {
			next ^= mtMatrixA
		}
		m.state[k] = next
	}
	m.index = 0
}

// random is Python's random.random(): 27 high bits of one output and 26 of the next
// form a 53-bit fraction in [0, 1).
func (m *mt19937) random() float64 {
	a := m.uint32() >> 5
	b := m.uint32() >> 6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}
