// Package simdcap reads WHESTBAKE_CPU_KERNEL, a ceiling on the vector
// instruction set the CPU kernels, cpukernel's forward pass and philox's sampler,
// may choose at start-up. It exists for tests and benchmarks: an AVX-512
// machine can run, measure and gate the AVX2 kernels that an AVX2-only host
// would run, as `WHESTBAKE_CPU_KERNEL=avx2 go test ./gpuengine/...` does, or the
// portable Go code, generic. Every level computes identical bits; only speed
// and the register blocking, and so heap bytes per sample, change.
//
// The variable is read once, when the program starts. It is a ceiling, never
// a demand: avx512 on a CPU without AVX-512 still runs AVX2. Unset, empty or
// "auto" is no ceiling. Any other value panics at start-up, so that a typo
// cannot silently measure the wrong kernel.
package simdcap

import (
	"fmt"
	"os"
	"strings"
)

// Env is the environment variable read at start-up.
const Env = "WHESTBAKE_CPU_KERNEL"

// Level is a vector instruction set, ordered: a ceiling of AVX2 admits
// Generic and AVX2.
type Level int

// The levels, lowest first.
const (
	Generic Level = iota // portable Go, no assembly
	AVX2                 // AVX2, with FMA3 for the forward kernel
	AVX512               // AVX-512F
)

func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

var ceiling = mustParse(os.Getenv(Env))

// Ceiling is the highest level the kernels may use, AVX512 without a ceiling.
func Ceiling() Level { return ceiling }

// Allows reports whether the kernels may use level l.
func Allows(l Level) bool { return l <= ceiling }

// Parse reads a value of Env: "", "auto", "avx512" or "avx512f", "avx2" or
// "avx2-fma", "generic" or "go"; case and surrounding blanks are ignored.
func Parse(v string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto", "avx512", "avx512f":
		return AVX512, nil
	case "avx2", "avx2-fma":
		return AVX2, nil
	case "generic", "go":
		return Generic, nil
	}
	return 0, fmt.Errorf(
		"%s=%q: want avx512, avx2 or generic (a ceiling on the CPU kernels), or leave it unset",
		Env,
		v,
	)
}

func mustParse(v string) Level {
	l, err := Parse(v)
	if err != nil {
		panic(err.Error())
	}
	return l
}
