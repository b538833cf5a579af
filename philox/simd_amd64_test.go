//go:build amd64 && !purego

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

var exhaustive = flag.Bool("philox.exhaustive", false, "check the radius of all 2^32 words against the scalar code (about a minute)")

// eachKernel runs f for every assembly kernel this CPU supports.
func eachKernel(t *testing.T, f func(t *testing.T, k kernel)) {
	if len(kernels) == 0 {
		t.Skip("no AVX2 on this machine")
	}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) { f(t, k) })
	}
}

func sameBits(t *testing.T, label string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d is %v (%08x), scalar code gives %v (%08x)",
				label, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// Whole Fill calls through each kernel against the scalar loop: every width
// 1..70 (ragged last blocks, groups split across rows, partial last groups),
// odd row counts, sample indices that carry into n_hi during the call or sit
// at 2^63 and 2^64, and many keys; about 2.5 million normals.
func TestKernelFillMatchesScalar(t *testing.T) {
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
			key := [2]uint32{rng.Uint32(), rng.Uint32()}
			cases = append(cases, fillCase{Sampler{key, w}, first, []int{1, 3, 9, 37, 101}[i]})
		}
	}
	for _, w := range []int{64, 255, 256} {
		cases = append(cases, fillCase{Sampler{[2]uint32{rng.Uint32(), rng.Uint32()}, w}, 1<<32 - 100, 257})
	}
	want := make([][]float32, len(cases))
	for i, c := range cases {
		want[i] = make([]float32, c.rows*c.s.Width)
		c.s.fillScalar(want[i], c.first, c.rows)
	}
	eachKernel(t, func(t *testing.T, k kernel) {
		for i, c := range cases {
			got := make([]float32, len(want[i])+5)
			for j := range got {
				got[j] = 42
			}
			k.fill(c.s, got, c.first, c.rows)
			label := fmt.Sprintf("key %x width %d first %d rows %d", c.s.Key, c.s.Width, c.first, c.rows)
			sameBits(t, label, got, want[i])
			for _, v := range got[len(want[i]):] {
				if v != 42 {
					t.Fatalf("%s: wrote past rows×Width", label)
				}
			}
		}
	})
}

// normalsOf runs the kernel's Box–Muller routine on word pairs (ra[i], rb[i])
// and returns Pair's two outputs for each.
func normalsOf(k kernel, ra, rb []uint32) (z0, z1 []float32) {
	perGroup := 2 * k.lanes // two pairs per slot
	groups := (len(ra) + perGroup - 1) / perGroup
	lane := make([]int, k.lanes) // inverse of laneSlot
	for l := range lane {
		lane[laneSlot(l, k.lanes)] = l
	}
	words := make([]uint32, groups*4*k.lanes)
	for i := range ra {
		slot, second := i/2, i%2
		g := slot / k.lanes
		base := g*4*k.lanes + 2*second*k.lanes + lane[slot%k.lanes]
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

func checkPairs(t *testing.T, k kernel, label string, ra, rb []uint32) {
	t.Helper()
	z0, z1 := normalsOf(k, ra, rb)
	for i := range ra {
		w0, w1 := Pair(ra[i], rb[i])
		if math.Float32bits(z0[i]) != math.Float32bits(w0) || math.Float32bits(z1[i]) != math.Float32bits(w1) {
			t.Fatalf("%s: Pair(%#x, %#x) = (%v, %v), scalar code gives (%v, %v)", label, ra[i], rb[i], z0[i], z1[i], w0, w1)
		}
	}
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

// With rb = 0 the angle is a = 0, quadrant 0, where cos = S(1−2^-24) is
// exactly 1, so z0 is the radius itself.
func TestKernelRadiusMatchesScalar(t *testing.T) {
	if c := sinHalfPi(1 - 1.0/(1<<24)); c != 1 {
		t.Fatalf("S(1−2^-24) = %v, the test needs exactly 1", c)
	}
	ra := radiusWords()
	rb := make([]uint32, len(ra))
	eachKernel(t, func(t *testing.T, k kernel) {
		z0, _ := normalsOf(k, ra, rb)
		for i, r := range ra {
			if want := radius(r); math.Float32bits(z0[i]) != math.Float32bits(want) {
				t.Fatalf("radius(%#x) = %v, scalar code gives %v", r, z0[i], want)
			}
		}
		checkPairs(t, k, "radius words", ra[:1<<16], rb[:1<<16])
	})
}

// Every angle word a = (rb>>7) & 0x7fffff, each in one quadrant (cycling) with
// random ignored low bits, and all four quadrants at the ends of the range.
func TestKernelAngleMatchesScalar(t *testing.T) {
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
	eachKernel(t, func(t *testing.T, k kernel) {
		checkPairs(t, k, "angle words", ra, rb)
	})
}

// go test ./philox -run Exhaustive -philox.exhaustive checks all 2^32 radius words.
func TestKernelRadiusExhaustive(t *testing.T) {
	if !*exhaustive {
		t.Skip("needs -philox.exhaustive")
	}
	eachKernel(t, func(t *testing.T, k kernel) {
		const chunk = 1 << 20
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
					z0, _ := normalsOf(k, ra, rb)
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
			t.Fatalf("radius differs from the scalar code at %#x (and %d more chunks)", bad[0], len(bad)-1)
		}
	})
}
