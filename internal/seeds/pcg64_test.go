package seeds

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
)

func split128(t *testing.T, n json.Number) (hi, lo uint64) {
	t.Helper()
	v, ok := new(big.Int).SetString(n.String(), 10)
	if !ok {
		t.Fatalf("bad 128-bit integer %q", n)
	}
	lo = new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi = new(big.Int).Rsh(v, 64).Uint64()
	return hi, lo
}

func TestPCG64MatchesNumpy(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.RNG {
		ss := NewSeedSequence(c.Seed)
		g := NewPCG64(ss)
		st := g.State()
		sh, sl := split128(t, c.Seeded.State)
		ih, il := split128(t, c.Seeded.Inc)
		seeded := PCG64State{
			StateHi: sh,
			StateLo: sl,
			IncHi:   ih,
			IncLo:   il,
		}
		if st != seeded {
			t.Errorf("seed %d: seeded state %+v, numpy state=%s inc=%s",
				c.Seed, st, c.Seeded.State, c.Seeded.Inc)
		}
		for i, w := range c.Uint64 {
			if got := g.NextUint64(); got != hexBits(t, w) {
				t.Fatalf("seed %d: uint64 #%d = %016x, numpy %s", c.Seed, i, got, w)
			}
		}

		g = NewPCG64(ss)
		for i, op := range c.Ops {
			var got uint64
			switch op[0] {
			case "u32":
				got = uint64(g.NextUint32())
			case "u64":
				got = g.NextUint64()
			case "f64":
				got = math.Float64bits(g.NextDouble())
			case "f32":
				got = uint64(math.Float32bits(g.NextFloat()))
			default:
				t.Fatalf("unknown op %q", op[0])
			}
			if got != hexBits(t, op[1]) {
				t.Fatalf("seed %d: op #%d %s = %x, numpy %s", c.Seed, i, op[0], got, op[1])
			}
		}
		sh, sl = split128(t, c.AfterOps.State)
		ih, il = split128(t, c.AfterOps.Inc)
		want := PCG64State{
			StateHi:   sh,
			StateLo:   sl,
			IncHi:     ih,
			IncLo:     il,
			HasUint32: c.AfterOps.HasUint32 != 0,
			Uinteger:  c.AfterOps.Uinteger,
		}
		if got := g.State(); got != want {
			t.Errorf("seed %d: state after ops %+v, numpy %+v", c.Seed, got, want)
		}

		g = NewPCG64(ss)
		for i, w := range c.Doubles {
			if got := g.NextDouble(); got != hexF64(t, w) {
				t.Fatalf("seed %d: double #%d = %v, numpy %v", c.Seed, i, got, hexF64(t, w))
			}
		}
		g = NewPCG64(ss)
		for i, w := range c.Floats {
			if got := g.NextFloat(); got != hexF32(t, w) {
				t.Fatalf("seed %d: float #%d = %v, numpy %v", c.Seed, i, got, hexF32(t, w))
			}
		}
	}
}

func TestSetStateResumesIncludingBufferedHalf(t *testing.T) {
	g := NewPCG64(NewSeedSequence(3))
	g.NextUint32() // leaves the high half buffered
	st := g.State()
	if !st.HasUint32 {
		t.Fatal("expected a buffered uint32 after one NextUint32")
	}
	want := []uint32{g.NextUint32(), g.NextUint32(), g.NextUint32()}
	h := NewPCG64(NewSeedSequence(1234))
	h.SetState(st)
	for i, w := range want {
		if got := h.NextUint32(); got != w {
			t.Fatalf("draw %d after SetState = %d, want %d", i, got, w)
		}
	}
}

func TestPCG64StateJSON(t *testing.T) {
	st := PCG64State{
		StateHi:   1,
		StateLo:   2,
		IncHi:     3,
		IncLo:     5,
		HasUint32: true,
		Uinteger:  7,
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"state_hi":1,"state_lo":2,"inc_hi":3,"inc_lo":5,"has_uint32":true,"uinteger":7}`
	if string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
	var back PCG64State
	err = json.NewDecoder(strings.NewReader(string(b))).Decode(&back)
	if err != nil || back != st {
		t.Fatalf("round trip %+v, %v", back, err)
	}
}
