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
	t, err := Fixed(v)
	if err != nil {
		return err
	}
	a.AddAcc(t)
	return nil
}

// AddAcc adds b to a (mod 2^192, which never wraps within MaxAbs·2^24).
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

// Int returns a as a big integer (the value times 2^64).
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

// Float64 returns a·2^-64 rounded to the nearest float64 (ties to even).
func (a Acc) Float64() float64 {
	f := new(big.Float).SetPrec(200).SetInt(a.Int())
	f.SetMantExp(f, -FracBits)
	v, _ := f.Float64()
	return v
}

// String encodes a as 48 hex digits (most significant limb first); used in checkpoints.
func (a Acc) String() string {
	return fmt.Sprintf("%016x%016x%016x", a[2], a[1], a[0])
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
