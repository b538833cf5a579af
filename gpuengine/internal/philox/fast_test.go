package philox

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// The fast paths (the portable lane code, and the assembly kernels registered
// by simd_amd64_test.go) against the reference: Block and Pair one at a time
// (fillScalar, ref_test.go), bit for bit.

var exhaustive = flag.Bool(
	"philox.exhaustive",
	false,
	"check the radius of all 2^32 words in every fast path (minutes)",
)

// impl is one fast path: fill is Fill through it, pairs is Pair on many word
// pairs (ra[i], rb[i]).
type impl struct {
	name  string
	fill  func(s Sampler, dst []float32, first int64, rows int)
	pairs func(ra, rb []uint32) (z0, z1 []float32)
}

var impls = []impl{{"go", Sampler.fillGo, goPairs}}

// goPairs runs word pairs through pairLanes, two pairs per lane.
func goPairs(ra, rb []uint32) (z0, z1 []float32) {
	z0, z1 = make([]float32, len(ra)), make([]float32, len(ra))
	for c := 0; c < len(ra); c += 2 * goLanes {
		var w [4][goLanes]uint32
		for j := c; j < min(len(ra), c+2*goLanes); j++ {
			i, second := (j-c)/2, (j-c)%2
			w[2*second][i], w[2*second+1][i] = ra[j], rb[j]
		}
		var out [4 * goLanes]float32
		pairLanes(&out, &w)
		for j := c; j < min(len(ra), c+2*goLanes); j++ {
			z0[j], z1[j] = out[2*(j-c)], out[2*(j-c)+1]
		}
	}
	return z0, z1
}

func eachImpl(t *testing.T, f func(t *testing.T, im impl)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { f(t, im) })
	}
}

func sameBits(t *testing.T, label string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d is %v (%08x), reference gives %v (%08x)",
				label, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// Whole Fill calls: every width 1..70 (ragged last blocks, SIMD groups split
// across rows, partial last groups), odd row counts, sample indices that carry
// into n_hi during the call or cross 2^63 and 2^64, a fresh key per call;
// about 5.5 million normals.
func TestFastFillMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	firsts := []int64{0, 1<<32 - 5, math.MaxInt64 - 6, -4, rng.Int64N(1 << 40)}
	type fillCase struct {
		s     Sampler
		first int64
		rows  int
	}
	var cases []fillCase
	for w := 1; w <= 70; w++ {
		for i, first := range firsts {
			for _, rows := range []int{1 + 2*i, 37 + 4*i, 101, 256 + i} {
				cases = append(
					cases,
					fillCase{Sampler{[2]uint32{rng.Uint32(), rng.Uint32()}, w}, first, rows},
				)
			}
		}
	}
	for _, w := range []int{64, 255, 256} {
		cases = append(
			cases,
			fillCase{Sampler{[2]uint32{rng.Uint32(), rng.Uint32()}, w}, 1<<32 - 100, 257},
		)
	}
	want := make([][]float32, len(cases))
	for i, c := range cases {
		want[i] = make([]float32, c.rows*c.s.Width)
		c.s.fillScalar(want[i], c.first, c.rows)
	}
	eachImpl(t, func(t *testing.T, im impl) {
		for i, c := range cases {
			got := make([]float32, len(want[i])+5)
			for j := range got {
				got[j] = 42
			}
			im.fill(c.s, got, c.first, c.rows)
			label := fmt.Sprintf(
				"key %x width %d first %d rows %d",
				c.s.Key,
				c.s.Width,
				c.first,
				c.rows,
			)
			sameBits(t, label, got, want[i])
			for _, v := range got[len(want[i]):] {
				if v != 42 {
					t.Fatalf("%s: wrote past rows×Width", label)
				}
			}
		}
	})
}

// radiusWords are the radius words checked on every run: all words below
// 2^20 (every exponent e ≤ 20, both sides of each fold), a dense stride over
// the rest, and ±64 around every power of two and every fold boundary
// 0xb504f4·2^(e−24) (where the leading 24 bits of 2r+1 pass 0xb504f3).
func radiusWords() []uint32 {
	var ws []uint32
	for r := uint32(0); r < 1<<20; r++ {
		ws = append(ws, r)
	}
	for r := uint64(1 << 20); r < 1<<32; r += 1021 {
		ws = append(ws, uint32(r))
	}
	for e := 0; e <= 32; e++ {
		for _, c := range []uint64{1 << e, 0xb504f4 << e >> 24} {
			for d := -64; d <= 64; d++ {
				if r := int64(c) + int64(d); r >= 0 && r < 1<<32 {
					ws = append(ws, uint32(r))
				}
			}
		}
	}
	return append(ws, 0, 1, 2, 1<<31-1, 1<<31, 1<<31+1, 1<<32-2, 1<<32-1)
}

// With rb = 0 the angle is a = 0 in quadrant 0, where cos = S(1−2^-24) is
// exactly 1, so z0 is the radius itself.
func TestFastRadiusMatchesScalar(t *testing.T) {
	if c := sinHalfPi(1 - 1.0/(1<<24)); c != 1 {
		t.Fatalf("S(1−2^-24) = %v, the test needs exactly 1", c)
	}
	ra := radiusWords()
	rb := make([]uint32, len(ra))
	want := make([]float32, len(ra))
	for i, r := range ra {
		want[i] = radius(r)
	}
	eachImpl(t, func(t *testing.T, im impl) {
		z0, _ := im.pairs(ra, rb)
		for i, r := range ra {
			if math.Float32bits(z0[i]) != math.Float32bits(want[i]) {
				t.Fatalf("radius(%#x) = %v, reference gives %v", r, z0[i], want[i])
			}
		}
	})
}

// Every angle word a = (rb>>7) & 0x7fffff, each in one quadrant (cycling) with
// random ignored low bits and a random radius word, and all four quadrants at
// the ends and the middle of the range.
func TestFastAngleMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ra, rb []uint32
	for a := uint32(0); a < 1<<23; a++ {
		ra = append(ra, rng.Uint32())
		rb = append(rb, (a+a>>2)%4<<30|a<<7|rng.Uint32()&0x7f)
	}
	for _, a := range []uint32{0, 1, 2, 1 << 21, 1 << 22, 1<<22 + 1, 1<<23 - 2, 1<<23 - 1} {
		for q := uint32(0); q < 4; q++ {
			ra = append(ra, rng.Uint32())
			rb = append(rb, q<<30|a<<7)
		}
	}
	w0, w1 := make([]float32, len(ra)), make([]float32, len(ra))
	for i := range ra {
		w0[i], w1[i] = Pair(ra[i], rb[i])
	}
	eachImpl(t, func(t *testing.T, im impl) {
		z0, z1 := im.pairs(ra, rb)
		for i := range ra {
			if math.Float32bits(z0[i]) != math.Float32bits(w0[i]) ||
				math.Float32bits(z1[i]) != math.Float32bits(w1[i]) {
				t.Fatalf(
					"Pair(%#x, %#x) = (%v, %v), reference gives (%v, %v)",
					ra[i],
					rb[i],
					z0[i],
					z1[i],
					w0[i],
					w1[i],
				)
			}
		}
	})
}

// go test ./philox -run Exhaustive -philox.exhaustive -timeout 1h checks the
// radius of all 2^32 words in every fast path, on all CPUs.
func TestFastRadiusExhaustive(t *testing.T) {
	if !*exhaustive {
		t.Skip("needs -philox.exhaustive")
	}
	const chunk = 1 << 20
	eachImpl(t, func(t *testing.T, im impl) {
		next := make(chan uint64)
		go func() {
			for c := uint64(0); c < 1<<32; c += chunk {
				next <- c
			}
			close(next)
		}()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []uint32
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ra, rb := make([]uint32, chunk), make([]uint32, chunk)
				for c := range next {
					for i := range ra {
						ra[i] = uint32(c) + uint32(i)
					}
					z0, _ := im.pairs(ra, rb)
					for i, r := range ra {
						if math.Float32bits(z0[i]) != math.Float32bits(radius(r)) {
							mu.Lock()
							bad = append(bad, r)
							mu.Unlock()
							break
						}
					}
				}
			}()
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf(
				"radius differs from the reference at %#x (first bad word of %d chunks)",
				bad[0],
				len(bad),
			)
		}
	})
}

// BenchmarkPaths: ns per normal of each path at Width 256, 64 rows per Fill.
func BenchmarkPaths(b *testing.B) {
	paths := append([]impl{{name: "reference", fill: Sampler.fillScalar}}, impls...)
	s := Sampler{Key: [2]uint32{1, 2}, Width: 256}
	buf := make([]float32, 256*64)
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.fill(s, buf, int64(i)*64, 64)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(buf)), "ns/normal")
		})
	}
}
