package bake

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
)

// ParseSlice parses "K/N".
func ParseSlice(spec string, n int) (bakeapi.Range, error) {
	a, b, ok := strings.Cut(spec, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(a))
	parts, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return bakeapi.Range{}, fmt.Errorf("--slice must be K/N (for example 0/4), got %q", spec)
	}
	r, err := bakeapi.SliceRange(k, parts, n)
	if err != nil {
		return r, fmt.Errorf("--%w", err)
	}
	return r, nil
}

// ParseMLPRange parses "A-B", inclusive at both ends like whestbench's CLI.
func ParseMLPRange(spec string, n int) (bakeapi.Range, error) {
	a, b, ok := strings.Cut(spec, "-")
	start, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return bakeapi.Range{}, fmt.Errorf("--mlp-range must be START-END, inclusive (for example 0-249), got %q", spec)
	}
	r := bakeapi.Range{Start: start, End: last + 1}
	if err := r.Validate(n); err != nil {
		return bakeapi.Range{}, fmt.Errorf("--mlp-range %s: %w", spec, err)
	}
	return r, nil
}
