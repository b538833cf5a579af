package exact

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// floorRef computes floor(v·2^64) with math/big, independently of the limb code.
func floorRef(v float64) *big.Int {
	f := new(big.Float).SetPrec(2000).SetFloat64(v)
	f.SetMantExp(f, 64)
	i, acc := f.Int(nil) // truncates toward zero
	if v < 0 && acc != big.Exact {
		i.Sub(i, big.NewInt(1))
	}
	return i
}

func TestFixedMatchesBigFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{
		0, math.Copysign(0, -1), 1, -1, 0.5, -0.5,
		0x1p-64, -0x1p-64, 0x1p-65, -0x1p-65, 0x1p-70, -0x1p-70, 5e-324, -5e-324,
		0x1p102, -0x1p102, 0x1.fffffp102, 1.0000000000000002, 123.456,
	}
	for i := 0; i < 100000; i++ {
		e := rng.IntN(180) - 90
		v := math.Ldexp(rng.Float64(), e)
		if rng.IntN(2) == 0 {
			v = -v
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		got, err := Fixed(v)
		if err != nil {
			t.Fatalf("Fixed(%v): %v", v, err)
		}
		if want := floorRef(v); got.Int().Cmp(want) != 0 {
			t.Fatalf("Fixed(%v) = %v, want %v", v, got.Int(), want)
		}
	}
}

func TestRangeErrors(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), MaxAbs, -MaxAbs} {
		if _, err := Fixed(v); !errors.Is(err, ErrRange) {
			t.Errorf("Fixed(%v) err = %v, want ErrRange", v, err)
		}
	}
}

func TestSumIsOrderIndependentAndExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := make([]float64, 5000)
	want := new(big.Int)
	for i := range vals {
		vals[i] = rng.NormFloat64() * math.Ldexp(1, rng.IntN(60)-30)
		want.Add(want, floorRef(vals[i]))
	}
	var fwd Acc
	for _, v := range vals {
		if err := fwd.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	// Shuffled and split into two partial accumulators combined afterwards.
	rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	var a, b Acc
	for i, v := range vals {
		if i%3 == 0 {
			_ = a.Add(v)
		} else {
			_ = b.Add(v)
		}
	}
	a.AddAcc(b)
	if fwd != a {
		t.Fatalf("order changed the total: %v vs %v", fwd, a)
	}
	if fwd.Int().Cmp(want) != 0 {
		t.Fatalf("total %v, want %v", fwd.Int(), want)
	}
}

func TestFloat64RoundsToNearest(t *testing.T) {
	// 1 + 2^-53 is a tie between 1 and 1+2^-52: ties to even gives 1.
	var a Acc
	_ = a.Add(1)
	_ = a.Add(0x1p-53)
	if got := a.Float64(); got != 1 {
		t.Fatalf("tie rounded to %v", got)
	}
	_ = a.Add(0x1p-60) // now above the tie
	if got := a.Float64(); got != 1+0x1p-52 {
		t.Fatalf("above tie rounded to %v", got)
	}
	var n Acc
	_ = n.Add(-2.75)
	if got := n.Float64(); got != -2.75 {
		t.Fatalf("negative value %v", got)
	}
}

func TestStringRoundTrip(t *testing.T) {
	var a Acc
	_ = a.Add(-12345.678)
	_ = a.Add(0x1p90)
	b, err := Parse(a.String())
	if err != nil || b != a {
		t.Fatalf("round trip %v -> %v (%v)", a, b, err)
	}
	if _, err := Parse("xyz"); err == nil {
		t.Fatal("short string accepted")
	}
}

// The philox engines' hot loop: AddEach (and Add, which shares its path for
// 0 ≤ v < 2^63) adds floor(v·2^64) exactly, by math/big, across the fast
// path's edges: zero, subnormals, fractions with bits below 2^-64, the
// largest value below 2^63, 2^63 itself and negative values (general path).
func TestAddEachMatchesBigFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := []float64{
		0, math.Copysign(0, -1), 5e-324, 0x1p-1022, 0x1p-64, 0x1.8p-64, 0x1p-65,
		0x1.fffffffffffffp-1, 1, 1.5, 0x1p32 + 0.75, 0x1p52 + 1, 0x1p53,
		0x1.fffffffffffffp62, 0x1p63, 0x1.0000000000001p63, 0x1p64, 0x1.fffffp102,
		-0x1p-70, -0.5, -1, -0x1p63,
	}
	for i := 0; i < 20000; i++ {
		v := math.Ldexp(rng.Float64(), rng.IntN(200)-130)
		if rng.IntN(8) == 0 {
			v = -v
		}
		vals = append(vals, v)
	}
	dst := make([]Acc, len(vals))
	for j := range dst { // start from non-zero totals, so carries into every limb happen
		dst[j] = Acc{rng.Uint64(), rng.Uint64(), rng.Uint64()}
	}
	want := make([]*big.Int, len(vals))
	for j, a := range dst {
		want[j] = new(big.Int).Add(a.Int(), floorRef(vals[j]))
	}
	if err := AddEach(dst, vals); err != nil {
		t.Fatal(err)
	}
	mod := new(big.Int).Lsh(big.NewInt(1), 192)
	for j, v := range vals {
		got, w := dst[j].Int(), new(big.Int).Set(want[j])
		// The accumulator is two's complement mod 2^192: compare mod 2^192.
		if got.Mod(got, mod).Cmp(w.Mod(w, mod)) != 0 {
			t.Fatalf(
				"AddEach of %v (%x): got %v, want %v",
				v,
				math.Float64bits(v),
				dst[j].Int(),
				want[j],
			)
		}
	}
}

// An out-of-range value fails AddEach with ErrRange naming it; the other
// values are still added.
func TestAddEachReportsTheFirstBadValue(t *testing.T) {
	dst := make([]Acc, 4)
	err := AddEach(dst, []float64{1, math.NaN(), 2, math.Inf(1)})
	if !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("err = %v, want ErrRange naming NaN", err)
	}
	if dst[0].Float64() != 1 || dst[2].Float64() != 2 || dst[1] != (Acc{}) || dst[3] != (Acc{}) {
		t.Fatalf("totals %v, want 1, 0, 2, 0", dst)
	}
}

func TestStringIsFmtHex(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		a := Acc{rng.Uint64(), rng.Uint64() >> rng.IntN(64), rng.Uint64() >> rng.IntN(64)}
		if want := fmt.Sprintf("%016x%016x%016x", a[2], a[1], a[0]); a.String() != want {
			t.Fatalf("String() = %s, want %s", a.String(), want)
		}
	}
}
