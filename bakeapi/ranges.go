package bakeapi

import "fmt"

// Range is a half-open range [Start, End) of MLP indices.
type Range struct{ Start, End int }

// Len is the number of MLPs in r.
func (r Range) Len() int { return r.End - r.Start }

// Validate checks 0 <= Start < End <= n.
func (r Range) Validate(n int) error {
	if r.Start < 0 || r.Start >= r.End || r.End > n {
		return fmt.Errorf(
			"MLP range [%d, %d) is invalid for %d MLPs: need 0 <= start < end <= n-mlps",
			r.Start,
			r.End,
			n,
		)
	}
	return nil
}

// SliceRange is whestbench's slice K of N: [K·n/N, (K+1)·n/N) with floor
// division, so the remainder is spread over the slices.
func SliceRange(k, parts, n int) (Range, error) {
	if parts <= 0 {
		return Range{}, fmt.Errorf("slice %d/%d: the number of slices must be at least 1", k, parts)
	}
	if k < 0 || k >= parts {
		return Range{}, fmt.Errorf(
			"slice %d/%d: need 0 <= K < N (slices are numbered from 0)",
			k,
			parts,
		)
	}
	if parts > n {
		return Range{}, fmt.Errorf(
			"slice %d/%d: %d slices of %d MLPs leave some slices empty; use at most %d slices",
			k,
			parts,
			parts,
			n,
			n,
		)
	}
	r := Range{k * n / parts, (k + 1) * n / parts}
	return r, r.Validate(n)
}

// SliceCount is the number of slices of at most size MLPs that cover n MLPs.
func SliceCount(n, size int) int { return (n + size - 1) / size }
