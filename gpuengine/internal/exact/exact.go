// Package exact accumulates float64 partial sums as fixed-point integers, so that
// the total is independent of the order and grouping of the additions. The
// philox algorithm feeds it one value per (tile, column); chunking, threading,
// slicing and resuming then cannot change a single bit of the result.
package exact

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// FracBits is the number of fractional bits: a value v contributes floor(v·2^64).
const FracBits = 64

// MaxAbs bounds the magnitude of one contribution. With 2^103 · 2^64 < 2^167 per
// term, 2^24 terms still fit the 192-bit two's-complement accumulator.
const MaxAbs = 0x1p103

// ErrRange reports a contribution that is NaN, infinite or beyond MaxAbs: the
// network's activations exploded and the bake cannot represent them.
var ErrRange = errors.New("exact: value out of the accumulator's range")

// Acc is a signed 192-bit fixed-point number, little-endian limbs, two's complement.
type Acc [3]uint64

// Add adds floor(v·2^64) to a.
func (a *Acc) Add(v float64) error {
	if v >= 0 && v < 0x1p63 {
		a.addSmall(v)
		return nil
	}
	t, err := Fixed(v)
	if err != nil {
		return err
	}
	a.AddAcc(t)
	return nil
}

// AddEach adds floor(v[j]·2^64) to dst[j] for every j < len(v), and returns
// the first out-of-range value's error; the others are still added. It is
// the hot loop of the philox engines: one call per tile and layer.
func AddEach(dst []Acc, v []float64) error {
	dst = dst[:len(v)]
	var err error
	for j, x := range v {
		if x >= 0 && x < 0x1p63 {
			dst[j].addSmall(x)
		} else if e := dst[j].Add(x); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// addSmall adds floor(v·2^64) for 0 ≤ v < 2^63, the values a sum of
// activations after relu takes, without Fixed's general shifts: the integer
// part i of v is the middle limb and the top 64 bits of its fraction the low
// limb, taken 32 bits at a time. Every step is exact: i = trunc(v) has at
// most v's 53 significant bits, so float64(i) is i; v − i is v's fraction,
// representable by Sterbenz's lemma or as i = 0, and so is each remainder below; scaling
// by 2^32 only moves the exponent; truncating a non-negative value is its
// floor. Only int64 conversions are used: Go's float-to-uint64 conversion
// branches on values ≥ 2^63, which the fraction's bits hit at random.
func (a *Acc) addSmall(v float64) {
	i := int64(v)
	f := (v - float64(i)) * 0x1p32
	hi := int64(f)
	lo := int64((f - float64(hi)) * 0x1p32)
	var c uint64
	a[0], c = bits.Add64(a[0], uint64(hi)<<32|uint64(lo), 0)
	a[1], c = bits.Add64(a[1], uint64(i), c)
	a[2] += c
}

// AddAcc adds b to a mod 2^192, which never wraps within MaxAbs·2^24.
func (a *Acc) AddAcc(b Acc) {
	var c uint64
	a[0], c = bits.Add64(a[0], b[0], 0)
	a[1], c = bits.Add64(a[1], b[1], c)
	a[2], _ = bits.Add64(a[2], b[2], c)
}

// Fixed returns floor(v·2^64) as an Acc.
func Fixed(v float64) (Acc, error) {
	if math.IsNaN(v) || math.Abs(v) >= MaxAbs {
		return Acc{}, fmt.Errorf("%w: %v", ErrRange, v)
	}
	b := math.Float64bits(v)
	neg := b>>63 != 0
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	if exp == 0 {
		exp = 1 // subnormal: no implicit bit
	} else {
		mant |= 1 << 52
	}
	// |v|·2^64 = mant·2^shift.
	shift := exp - 1075 + FracBits
	var m Acc
	inexact := false
	switch {
	case mant == 0:
	case shift >= 0:
		m = shl(mant, uint(shift))
	case shift > -64:
		m[0] = mant >> uint(-shift)
		inexact = mant<<uint(64+shift) != 0
	default:
		inexact = true
	}
	if neg {
		if inexact { // floor of a negative non-integer is one further from zero
			m.AddAcc(Acc{1})
		}
		m = m.neg()
	}
	return m, nil
}

func shl(x uint64, s uint) Acc {
	var r Acc
	limb, off := s/64, s%64
	r[limb] = x << off
	if off != 0 && limb+1 < 3 {
		r[limb+1] = x >> (64 - off)
	}
	return r
}

func (a Acc) neg() Acc {
	n := Acc{^a[0], ^a[1], ^a[2]}
	n.AddAcc(Acc{1})
	return n
}

// Int returns a as a big integer: the value times 2^64.
func (a Acc) Int() *big.Int {
	neg := a[2]>>63 != 0
	m := a
	if neg {
		m = a.neg()
	}
	x := new(big.Int).SetUint64(m[2])
	x.Lsh(x, 64).Or(x, new(big.Int).SetUint64(m[1]))
	x.Lsh(x, 64).Or(x, new(big.Int).SetUint64(m[0]))
	if neg {
		x.Neg(x)
	}
	return x
}

// Float64 returns a·2^-64 rounded to the nearest float64, ties to even.
func (a Acc) Float64() float64 {
	f := new(big.Float).SetPrec(200).SetInt(a.Int())
	f.SetMantExp(f, -FracBits)
	v, _ := f.Float64()
	return v
}

// String encodes a as 48 hex digits, most significant limb first; used in
// checkpoints, of which a bake writes D·W+W per step, so without fmt.
func (a Acc) String() string {
	const digits = "0123456789abcdef"
	var b [48]byte
	for i := range b {
		limb := a[2-i/16]
		b[i] = digits[limb>>(60-4*uint(i%16))&0xf]
	}
	return string(b[:])
}

// Parse decodes String's output.
func Parse(s string) (Acc, error) {
	var a Acc
	if len(s) != 48 {
		return a, fmt.Errorf("exact: accumulator %q: want 48 hex digits", s)
	}
	for i := 0; i < 3; i++ {
		var limb uint64
		if _, err := fmt.Sscanf(s[i*16:(i+1)*16], "%016x", &limb); err != nil {
			return a, fmt.Errorf("exact: accumulator %q: %v", s, err)
		}
		a[2-i] = limb
	}
	return a, nil
}
