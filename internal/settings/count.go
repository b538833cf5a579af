package settings

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
)

// Count is a positive integer that also accepts 1e9 and 1_000_000_000, the
// spellings whestbench's docs use for sample counts, from YAML, env or flags.
type Count int64

// countSyntax is the whole grammar: decimal digits with single underscores
// between them, an optional fraction and an optional exponent. big.Rat
// alone would also take "+5", "0x10", "0b101" and "1_e5".
var countSyntax = regexp.MustCompile(`^[0-9]+(_[0-9]+)*(\.[0-9]+(_[0-9]+)*)?([eE][+-]?[0-9]+(_[0-9]+)*)?$`)

// ParseCount accepts decimal integers with single underscores between digits and
// exact scientific notation (1e9, 2.5e6); it refuses fractions and signs.
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty value: give a positive integer such as 1000000, 1_000_000 or 1e6")
	}
	if strings.Contains(t, "__") || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") {
		return 0, fmt.Errorf("%q: underscores may only separate digits (1_000_000)", s)
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative: give a positive integer", s)
	}
	if !countSyntax.MatchString(t) {
		return 0, fmt.Errorf("%q is not a number: give a positive integer such as 1000000, 1_000_000 or 1e6", s)
	}
	r, ok := new(big.Rat).SetString(strings.ReplaceAll(t, "_", ""))
	if !ok {
		return 0, fmt.Errorf("%q has an exponent beyond any count", s)
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if r.Num().Sign() <= 0 {
		return 0, fmt.Errorf("%q must be at least 1", s)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is absurdly large", s)
	}
	return r.Num().Int64(), nil
}
