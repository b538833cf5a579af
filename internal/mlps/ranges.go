package mlps

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
)

// The fields of a bake's MLP range in ParseSlice's and ParseMLPRange's
// field errors; the CLI names them --slice and --mlp-range.
const (
	FieldSlice    = "slice"
	FieldMLPRange = "mlp-range"
)

func rangeErr(field, format string, a ...any) error {
	return bakeapi.FieldErrors{{Field: field, Problem: fmt.Sprintf(format, a...)}}
}

// ParseSlice parses "K/N". Its errors are field errors of FieldSlice.
func ParseSlice(spec string, n int) (bakeapi.Range, error) {
	a, b, ok := strings.Cut(spec, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(a))
	parts, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return bakeapi.Range{}, rangeErr(FieldSlice, "must be K/N (for example 0/4), got %q", spec)
	}
	r, err := bakeapi.SliceRange(k, parts, n)
	if err != nil {
		// SliceRange's errors begin with the field's name: "slice K/N: …".
		return r, rangeErr(FieldSlice, "%s", strings.TrimPrefix(err.Error(), FieldSlice+" "))
	}
	return r, nil
}

// ParseMLPRange parses "A-B", inclusive at both ends like whestbench's CLI.
// Its errors are field errors of FieldMLPRange.
func ParseMLPRange(spec string, n int) (bakeapi.Range, error) {
	a, b, ok := strings.Cut(spec, "-")
	start, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return bakeapi.Range{}, rangeErr(
			FieldMLPRange,
			"must be START-END, inclusive (for example 0-249), got %q",
			spec,
		)
	}
	r := bakeapi.Range{Start: start, End: last + 1}
	if err := r.Validate(n); err != nil {
		return bakeapi.Range{}, rangeErr(FieldMLPRange, "%s: %v", spec, err)
	}
	return r, nil
}
