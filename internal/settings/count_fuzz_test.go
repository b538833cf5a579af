package settings_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/settings"
)

// FuzzParseCount checks what ParseCount accepts: a count in [0, MaxInt64/2]
// (0 is the validators' "missing")
// spelled in decimal digits, underscores, a fraction and an exponent only
// (no sign, no base prefix), whose underscores do not change the value and
// whose own decimal rendering parses back to it. The edge cases live in
// testdata/fuzz/FuzzParseCount; "+5", "0b101" and "1_e5" were accepted
// before countSyntax.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{
		"1e9", "1_000_000", "2.5e6", " 42 ", "4611686018427387903", "1.5", "-1", "", "0", "0e3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := settings.ParseCount(s)
		if err != nil {
			return
		}
		if n < 0 || n > math.MaxInt64/2 {
			t.Fatalf("%q = %d, outside [0, MaxInt64/2]", s, n)
		}
		// Surrounding (Unicode) space is trimmed; what it surrounds is the number.
		num := strings.TrimSpace(s)
		notNumeric := func(r rune) bool { return !strings.ContainsRune("0123456789_.eE+-", r) }
		if i := strings.IndexFunc(num, notNumeric); i >= 0 {
			t.Fatalf("%q = %d accepted despite %q", s, n, num[i:])
		}
		if num[0] == '+' || num[0] == '-' {
			t.Fatalf("%q = %d accepted with a sign", s, n)
		}
		isDigit := func(i int) bool {
			return i >= 0 && i < len(num) && num[i] >= '0' && num[i] <= '9'
		}
		for i := range len(num) {
			if num[i] == '_' && !(isDigit(i-1) && isDigit(i+1)) {
				t.Fatalf("%q = %d accepted with an underscore between non-digits", s, n)
			}
		}
		if m, err := settings.ParseCount(strings.ReplaceAll(s, "_", "")); err != nil || m != n {
			t.Fatalf("%q = %d but without underscores %d, %v", s, n, m, err)
		}
		dec := strconv.FormatInt(n, 10)
		if m, err := settings.ParseCount(dec); err != nil || m != n {
			t.Fatalf("%q = %d does not round-trip through %q: %d, %v", s, n, dec, m, err)
		}
	})
}

// FuzzParseByteSize checks that an accepted size is non-negative and that
// its plain byte count parses back to it.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{
		"64GiB", "512MiB", "1e9", "7B", "1TiB", "64GB", "8EiB", "9999999TiB",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := settings.ParseByteSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("%q = %d", s, n)
		}
		if m, err := settings.ParseByteSize(strconv.FormatInt(n, 10)); err != nil || m != n {
			t.Fatalf("%q = %d does not round-trip: %d, %v", s, n, m, err)
		}
	})
}
