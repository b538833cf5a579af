package pyjson

import (
	"bufio"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fixtures are whestbench's own datasets, whose metadata.json Python wrote.
const fixtures = "../../../testdata/whestbench-fixtures"

// The expected bytes were written by /usr/bin/python3 json.dumps
// (testdata/gen.py).

func nestedSample() *Object {
	big70 := new(big.Int).Lsh(big.NewInt(1), 70)
	return NewObject().
		Set("a", 1).
		Set("b", []any{1, 2.5, "x"}).
		Set("c", NewObject()).
		Set("d", []any{}).
		Set("e", nil).
		Set("f", true).
		Set("g", NewObject().
			Set("h", []any{[]any{}, NewObject(), []any{[]int{1}}}).
			Set("i", "ünïcödé \u2028 😀 \"q\" \\ \n\t\r\b\f\x01\x1f\x7f/")).
		Set("big", big70).
		Set("neg", int64(-5)).
		Set("zero", uint8(0)).
		Set("floats", []float64{
			0.1, 1e16, 1e15, 1e-05, 0.0001, 123456789.0, math.Copysign(0, -1),
			1.5e300, 5e-324, math.Float64frombits(3), 1.0 / 3,
		})
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPyDumpsMatchesPython(t *testing.T) {
	indent, err := nestedSample().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := readTestdata(t, "nested_indent.json"); string(indent) != string(want) {
		t.Errorf("indent=2 encoding differs from Python:\n got %s\nwant %s", indent, want)
	}
	compact, err := Dumps(nestedSample(), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := readTestdata(t, "nested_compact.json"); string(compact) != string(want) {
		t.Errorf("default encoding differs from Python:\n got %s\nwant %s", compact, want)
	}
	specials, err := Dumps([]any{math.NaN(), math.Inf(1), math.Inf(-1)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := readTestdata(t, "specials_indent.json"); string(specials) != string(want) {
		t.Errorf("non-finite floats: got %s want %s", specials, want)
	}
}

// Decoding then encoding must give back Python's bytes exactly: the three
// fixtures' metadata.json files and the samples.
func TestPyRoundTripIsByteExact(t *testing.T) {
	paths := []string{
		"testdata/nested_indent.json",
		"testdata/bake_partial.json",
		fixtures + "/single_split_v3_protocol/metadata.json",
		fixtures + "/multi_split_v3.0/metadata.json",
		fixtures + "/multi_config_v3.0/metadata.json",
	}
	for _, p := range paths {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var o Object
		if err := json.Unmarshal(want, &o); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s does not round-trip:\n got %s\nwant %s", p, got, want)
		}
	}
}

func TestFloatReprMatchesPython(t *testing.T) {
	f, err := os.Open("testdata/floats.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		hexBits, want, _ := strings.Cut(sc.Text(), " ")
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := FloatRepr(math.Float64frombits(bits)); got != want {
			t.Errorf("bits %s: got %s, Python %s", hexBits, got, want)
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("read %d samples, expected 3000", n)
	}
}

func TestObjectKeepsOrderAndExactIntegers(t *testing.T) {
	var o Object
	// A repeated key keeps its first position and its last value (json.loads).
	doc := `{"z": 1, "a": 18446744073709551617, "z": 2.0, "m": [1, {"q": null}]}`
	if err := o.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.Keys(), ","); got != "z,a,m" {
		t.Errorf("keys %s, want z,a,m", got)
	}
	if _, ok := o.GetInt("z"); ok {
		t.Error("2.0 is a float, GetInt must refuse it")
	}
	if f, _ := o.GetFloat("z"); f != 2 {
		t.Errorf("z = %v, want 2", f)
	}
	if v, _ := o.Get("a"); v != json.Number("18446744073709551617") {
		t.Errorf("big integer not kept exact: %v", v)
	}
	o.Set("a", "x") // keeps position
	o.Set("new", 1)
	o.Delete("z")
	o.Delete("absent")
	if got := strings.Join(o.Keys(), ","); got != "a,m,new" {
		t.Errorf("keys after edits %s, want a,m,new", got)
	}
	c := o.Clone()
	arr, _ := c.GetArray("m")
	arr[1].(*Object).Set("q", 5)
	if inner, _ := o.GetArray("m"); inner[1].(*Object).Truthy("q") {
		t.Error("Clone shares nested objects with the original")
	}
	for _, bad := range []string{`[1]`, `{"a": 1} x`, `{"a": }`, `{"a": 1`} {
		if err := new(Object).UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}
	if _, err := Dumps(NewObject().Set("ch", make(chan int)), true); err == nil {
		t.Error("encoding a channel must fail")
	}
}

func TestJSONEqualIsPythonEquality(t *testing.T) {
	dec := func(s string) any {
		v, err := Loads([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		a, b string
		eq   bool
	}{
		{`{"name": "x", "version": "3.0"}`, `{"version": "3.0", "name": "x"}`, true},
		{`1`, `1.0`, true},
		{`100000000000000000001`, `100000000000000000000`, false},
		{`[1, 2]`, `[2, 1]`, false},
		{`null`, `0`, false},
		{`{"a": 1}`, `{"a": 1, "b": 2}`, false},
		{`"3.0"`, `3.0`, false},
	} {
		if got := Equal(dec(c.a), dec(c.b)); got != c.eq {
			t.Errorf("%s == %s: got %v want %v", c.a, c.b, got, c.eq)
		}
	}
}
