package settings

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
)

// Count is a non-negative integer, 0 when not set, that also accepts 1e9 and
// 1_000_000_000, the spellings whestbench's docs use for sample counts, from
// YAML, env or flags.
type Count int64

// countSyntax is the whole grammar: decimal digits with single underscores
// between them, an optional fraction and an optional exponent. big.Rat
// alone would also take "+5", "0x10", "0b101" and "1_e5".
var countSyntax = regexp.MustCompile(
	`^[0-9]+(_[0-9]+)*(\.[0-9]+(_[0-9]+)*)?([eE][+-]?[0-9]+(_[0-9]+)*)?$`,
)

// ParseCount accepts decimal integers with single underscores between digits and
// exact scientific notation such as 1e9 and 2.5e6; it refuses fractions and
// signs. It accepts 0 and bounds counts only far below overflow: the validators
// own the ranges, and bakeapi reports 0 as missing, so each rule has one wording.
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty value: " +
			"give a positive integer such as 1000000, 1_000_000 or 1e6")
	}
	if strings.Contains(t, "__") || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") {
		return 0, fmt.Errorf("%q: underscores may only separate digits (1_000_000)", s)
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative: give a positive integer", s)
	}
	if !countSyntax.MatchString(t) {
		return 0, fmt.Errorf(
			"%q is not a number: give a positive integer such as 1000000, 1_000_000 or 1e6",
			s,
		)
	}
	r, ok := new(big.Rat).SetString(strings.ReplaceAll(t, "_", ""))
	if !ok {
		return 0, fmt.Errorf("%q has an exponent beyond any count", s)
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is absurdly large", s)
	}
	return r.Num().Int64(), nil
}

// ByteSize is a memory size in bytes, 0 when not set, written as a count or
// with a binary unit: 512MiB, 64GiB, 1TiB.
type ByteSize int64

// byteUnits are the suffixes ParseByteSize takes, longest first.
var byteUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// ParseByteSize reads a ByteSize: a count in ParseCount's spellings with an
// optional binary unit suffix.
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			n, err := ParseCount(num)
			if err != nil {
				return 0, fmt.Errorf(
					"%q is not a size: "+
						"give a number with an optional unit B, KiB, MiB, GiB or TiB, e.g. 64GiB",
					s,
				)
			}
			if n > math.MaxInt64>>(u.shift+1) {
				return 0, fmt.Errorf("%q is absurdly large", s)
			}
			return n << u.shift, nil
		}
	}
	return ParseCount(t)
}
