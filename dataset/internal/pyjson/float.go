package pyjson

import (
	"math"
	"strconv"
	"strings"
)

// FloatRepr formats f the way Python's json.dumps does: float.__repr__, the
// shortest digits that round-trip, in fixed notation for decimal exponents
// in [-4, 16) and otherwise as d.ddde±XX, and NaN/Infinity/-Infinity for the
// non-finite values. Go's shortest-digit search finds the same digits as
// Python's dtoa mode 0; only the layout differs from strconv's.
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	// "d.ddde±XX": split into the digit string and the decimal exponent.
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	// decpt is where the decimal point goes relative to the digits, Python's
	// name for it: value = 0.DIGITS × 10^decpt.
	decpt := exp + 1
	var b strings.Builder
	b.WriteString(sign)
	switch {
	case decpt > -4 && decpt <= 16 && decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	case decpt > -4 && decpt <= 16 && decpt >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", decpt-len(digits)))
		b.WriteString(".0")
	case decpt > -4 && decpt <= 16:
		b.WriteString(digits[:decpt])
		b.WriteByte('.')
		b.WriteString(digits[decpt:])
	default:
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	}
	return b.String()
}
