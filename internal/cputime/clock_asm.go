//go:build amd64

package cputime

const haveChain = true

// addChain is in clock_amd64.s.
func addChain(loops int) int
