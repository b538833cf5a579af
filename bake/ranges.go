package bake

import (
	"fmt"
	"strconv"
	"strings"
)

// Range is a half-open range [Start, End) of MLP indices.
type Range struct{ Start, End int }

// Len is the number of MLPs in r.
func (r Range) Len() int { return r.End - r.Start }

// Validate checks 0 <= Start < End <= n.
func (r Range) Validate(n int) error {
	if r.Start < 0 || r.Start >= r.End || r.End > n {
		return fmt.Errorf("MLP range [%d, %d) invalid for --n-mlps=%d; need 0 <= start < end <= n-mlps", r.Start, r.End, n)
	}
	return nil
}

// SliceRange is whestbench's --slice K/N: [K·n/N, (K+1)·n/N) with floor division,
// so the remainder is spread over the slices.
func SliceRange(k, parts, n int) (Range, error) {
	if parts <= 0 {
		return Range{}, fmt.Errorf("--slice %d/%d: the number of slices must be at least 1", k, parts)
	}
	if k < 0 || k >= parts {
		return Range{}, fmt.Errorf("--slice %d/%d: need 0 <= K < N (slices are numbered from 0)", k, parts)
	}
	if parts > n {
		return Range{}, fmt.Errorf("--slice %d/%d: %d slices of %d MLPs leave some slices empty; use at most %d slices", k, parts, parts, n, n)
	}
	r := Range{k * n / parts, (k + 1) * n / parts}
	return r, r.Validate(n)
}

// ParseSlice parses "K/N".
func ParseSlice(spec string, n int) (Range, error) {
	a, b, ok := strings.Cut(spec, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(a))
	parts, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Range{}, fmt.Errorf("--slice must be K/N (for example 0/4), got %q", spec)
	}
	return SliceRange(k, parts, n)
}

// ParseMLPRange parses "A-B", inclusive at both ends like whestbench's CLI.
func ParseMLPRange(spec string, n int) (Range, error) {
	a, b, ok := strings.Cut(spec, "-")
	start, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Range{}, fmt.Errorf("--mlp-range must be START-END, inclusive (for example 0-249), got %q", spec)
	}
	r := Range{start, last + 1}
	if err := r.Validate(n); err != nil {
		return Range{}, fmt.Errorf("--mlp-range %s: %w", spec, err)
	}
	return r, nil
}
