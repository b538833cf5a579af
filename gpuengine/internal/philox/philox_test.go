package philox

import (
	"math"
	"testing"
)

// Random123's published known-answer vectors (kat_vectors, philox4x32 10 rounds).
func TestBlockKnownAnswers(t *testing.T) {
	cases := []struct {
		c    [4]uint32
		k    [2]uint32
		want [4]uint32
	}{
		{
			[4]uint32{0, 0, 0, 0},
			[2]uint32{0, 0},
			[4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
		},
		{
			[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
			[2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
		},
		{
			[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
			[2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
		},
	}
	for _, c := range cases {
		if got := Block(c.c, c.k); got != c.want {
			t.Errorf("Block(%x, %x) = %x, want %x", c.c, c.k, got, c.want)
		}
	}
}

// The fixed-op transcendental pieces against float64 math at many points.
func TestRadiusAndAngleAccuracy(t *testing.T) {
	worstR := 0.0
	for i := uint64(0); i < 1<<32; i += 9973 * 7 {
		r := uint32(i)
		u := (2*float64(r) + 1) / (1 << 33)
		want := math.Sqrt(-2 * math.Log(u))
		got := float64(radius(r))
		if err := math.Abs(got-want) / math.Max(want, 1e-3); err > worstR {
			worstR = err
		}
	}
	if worstR > 2e-6 {
		t.Errorf("radius relative error %g", worstR)
	}
	worstS := 0.0
	for a := uint32(0); a < 1<<23; a += 97 {
		v := float32(2*a+1) / (1 << 24)
		want := math.Sin(math.Pi / 2 * float64(v))
		if err := math.Abs(float64(sinHalfPi(v)) - want); err > worstS {
			worstS = err
		}
	}
	if worstS > 3e-7 {
		t.Errorf("sin absolute error %g", worstS)
	}
	if got := float64(radius(0)); math.Abs(got-math.Sqrt(66*math.Ln2)) > 1e-5 {
		t.Errorf("largest radius %v", got)
	}
}

// Moments and tail mass of the sampler's output against N(0,1).
func TestNormalMoments(t *testing.T) {
	s := Sampler{Key: [2]uint32{12345, 678}, Width: 64}
	const rows = 20000
	buf := make([]float32, rows*s.Width)
	s.Fill(buf, 1<<40, rows)
	n := float64(len(buf))
	var m1, m2, m3, m4, tail float64
	for _, x := range buf {
		v := float64(x)
		m1 += v
		m2 += v * v
		m3 += v * v * v
		m4 += v * v * v * v
		if math.Abs(v) > 2 {
			tail++
		}
	}
	m1, m2, m3, m4, tail = m1/n, m2/n, m3/n, m4/n, tail/n
	se := 1 / math.Sqrt(n)
	check := func(name string, got, want, sd float64) {
		if math.Abs(got-want) > 5*sd*se {
			t.Errorf("%s = %v, want %v ± %v", name, got, want, 5*sd*se)
		}
	}
	check("mean", m1, 0, 1)
	check("E[x²]", m2, 1, math.Sqrt(2))
	check("E[x³]", m3, 0, math.Sqrt(15))
	check("E[x⁴]", m4, 3, math.Sqrt(96))
	p := math.Erfc(2 / math.Sqrt2) // P(|x| > 2)
	check("P(|x|>2)", tail, p, math.Sqrt(p*(1-p)))
}

// Inputs are a function of the sample index only: any grouping gives the same values.
func TestFillIsPositionPure(t *testing.T) {
	for _, w := range []int{1, 3, 4, 5, 8, 13} {
		s := Sampler{Key: [2]uint32{7, 9}, Width: w}
		all := make([]float32, 10*w)
		s.Fill(all, 100, 10)
		one := make([]float32, w)
		for r := 0; r < 10; r++ {
			s.Fill(one, int64(100+r), 1)
			for j := range one {
				if math.Float32bits(one[j]) != math.Float32bits(all[r*w+j]) {
					t.Fatalf("w=%d row %d col %d differs", w, r, j)
				}
			}
		}
		// Narrower widths are prefixes of wider ones: column j never depends on W.
		wide := make([]float32, 16)
		Sampler{Key: s.Key, Width: 16}.Fill(wide, 100, 1)
		for j := 0; j < w; j++ {
			if all[j] != wide[j] {
				t.Fatalf("w=%d col %d depends on width", w, j)
			}
		}
	}
}

func BenchmarkFill256(b *testing.B) {
	s := Sampler{Key: [2]uint32{1, 2}, Width: 256}
	buf := make([]float32, 256*64)
	b.SetBytes(int64(len(buf) * 4))
	for i := 0; i < b.N; i++ {
		s.Fill(buf, int64(i)*64, 64)
	}
}
