package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

// Checksums and totals of faker 37.12.0's en_US name lists (computed from
// https://github.com/joke2k/faker/blob/v37.12.0/faker/providers/person/en_US/__init__.py):
// SHA-256 over "{name}\t{repr(float(weight))}\n" in list order.
func TestListsMatchFakerChecksums(t *testing.T) {
	for _, c := range []struct {
		file, text string
		list       weightedList
		n          int
		total      float64
		sha        string
	}{
		{"first_names.tsv", firstNamesTSV, lists().first, 690, 1.9859461509999992,
			"ac34a1bc71e570f7cee2b92ff0ea38a6009f35460aeccede24b71f3048f75161"},
		{"last_names.tsv", lastNamesTSV, lists().last, 1000, 1.000000008999998,
			"161c4b10c4556e4cae18a2928c8a3e90b66582561dbb690950760b5e17a05187"},
	} {
		h := sha256.New()
		for _, line := range strings.Split(strings.TrimSuffix(c.text, "\n"), "\n") {
			name, weightText, _ := strings.Cut(line, "\t")
			w, err := strconv.ParseFloat(weightText, 64)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			h.Write([]byte(name + "\t" + pythonFloatRepr(w) + "\n"))
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.sha {
			t.Errorf("%s: sha256 %s, want %s", c.file, got, c.sha)
		}
		if len(c.list.names) != c.n {
			t.Errorf("%s: %d entries, want %d", c.file, len(c.list.names), c.n)
		}
		if got := c.list.cum[len(c.list.cum)-1]; got != c.total {
			t.Errorf("%s: total weight %v, want %v", c.file, got, c.total)
		}
	}
}

// pythonFloatRepr formats like Python's repr(float): shortest round-trip digits, fixed
// notation for decimal exponents -4..15 with ".0" on integral values, otherwise
// d[.ddd]e±XX. Go's 'g' format switches to exponents at different points. Finite
// values only, which is all the weight lists hold.
func pythonFloatRepr(f float64) string {
	sci := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "-1.2345e-07"
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return mant + "e" + sign + leftPad2(exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func leftPad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Expected strings are what CPython prints for repr() of each value.
func TestPythonFloatRepr(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0.004529083, "0.004529083"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.5e-7, "1.5e-07"},
		{1, "1.0"},
		{123456.0, "123456.0"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{1.25e100, "1.25e+100"},
		{-0.5, "-0.5"},
		{0.30000000000000004, "0.30000000000000004"},
	} {
		if got := pythonFloatRepr(c.f); got != c.want {
			t.Errorf("pythonFloatRepr(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestParseListRejectsBadLines(t *testing.T) {
	for _, text := range []string{"Ann\n", "Ann\tx\n", "Ann\t-1\n", "\t0.5\n", "Ann\t0\n"} {
		if _, err := parseList(text); err == nil {
			t.Errorf("parseList(%q) succeeded, want an error", text)
		}
	}
}
