package pyjson

import (
	"bytes"
	"math"
	"os"
	"testing"
)

// FuzzPyLoads feeds arbitrary bytes to the metadata.json decoder. What it
// accepts must encode, and encoding is a fixed point: decoding the output
// gives a value that is Python-equal and encodes to the same bytes, in both
// the indented and the compact layout.
func FuzzPyLoads(f *testing.F) {
	for _, s := range []string{
		`{"z": 1, "a": 18446744073709551617, "z": 2.0, "m": [1, {"q": null}]}`,
		`[1e16, 1e-05, -0, -0.0, 5e-324, 1.7976931348623157e308, 1E2]`,
		`"\ud83d\ude00 \u2028 \"q\" \\ \n\t\r\b\f \udc00"`,
		`{"info": {"features": {"weights": {"shape": [2, 4, 4]}}}}`,
		`[[[[[[[[[[]]]]]]]]]]`,
		`{} x`,
		`1e400`,
	} {
		f.Add([]byte(s))
	}
	f.Add(readTestdataF(f, fixtures+"/multi_config_v3.0/metadata.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Loads(data)
		if err != nil {
			return
		}
		compact, err := Dumps(v, false)
		if err != nil {
			t.Fatalf("decoded %q to %#v, which does not encode: %v", data, v, err)
		}
		indented, err := Dumps(v, true)
		if err != nil {
			t.Fatalf("decoded %q to %#v, which does not encode indented: %v", data, v, err)
		}
		if !allFinite(v) {
			// encoding/json, which Loads builds on, rejects the NaN and
			// Infinity that json.dumps writes for 1e400 and friends.
			return
		}
		for _, enc := range [][]byte{compact, indented} {
			w, err := Loads(enc)
			if err != nil {
				t.Fatalf("%q re-encoded as %q, which does not decode: %v", data, enc, err)
			}
			if !Equal(v, w) {
				t.Fatalf("%q re-encoded as %q decodes to a different value", data, enc)
			}
			if again, err := Dumps(w, false); err != nil || !bytes.Equal(again, compact) {
				t.Fatalf("%q: encoding is not a fixed point: %q then %q (%v)",
					data, compact, again, err)
			}
		}
	})
}

func allFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case *Object:
		for _, k := range x.keys {
			if !allFinite(x.vals[k]) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !allFinite(e) {
				return false
			}
		}
	}
	return true
}

// TestPyLoadsBoundsNesting is the input that overflowed the goroutine stack
// (a fatal error, not a panic) before decoding had a depth limit.
func TestPyLoadsBoundsNesting(t *testing.T) {
	deep := bytes.Repeat([]byte("["), 10_000_000)
	if _, err := Loads(deep); err == nil {
		t.Fatal("ten million unclosed arrays decoded")
	}
	ok := append(bytes.Repeat([]byte("["), maxNesting), bytes.Repeat([]byte("]"), maxNesting)...)
	if _, err := Loads(ok); err != nil {
		t.Fatalf("%d nested arrays refused: %v", maxNesting, err)
	}
}

func readTestdataF(f *testing.F, path string) []byte {
	f.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
