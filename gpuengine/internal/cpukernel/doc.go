// Package kernel is the CPU forward kernel shared by the CPU engines: one dense
// layer relu(x @ W) in float32, plus the float64 column statistics taken after it.
//
// The arithmetic is a contract, defined bit for bit, so that every implementation,
// the pure-Go path, the AVX2 and AVX-512 assembly and the CUDA kernel, produces
// identical bits:
//
//	dst[r*W+j] = relu(acc), acc = +0 (float32), then for i = 0..W-1 ascending:
//	  FMA:    acc = fma_f32(src[r*W+i], w[i*W+j], acc)            one rounding per step
//	  MulAdd: acc = float32(acc + float32(src[r*W+i]*w[i*W+j]))   two roundings per step
//	relu(a) = a if a > 0 else +0
//
// All arithmetic is IEEE binary32 with round-to-nearest-even and gradual underflow,
// no flush-to-zero. Because acc starts at +0 and relu maps everything that is not
// positive to +0, no output is ever -0 and a NaN accumulator becomes +0.
//
// The column statistics add float64 values row by row in ascending row order, each
// addition rounded in float64, which is numpy's order for x.astype(float64).sum(0).
//
// On amd64 the assembly is chosen at start-up from the CPU's features: AVX-512F,
// else AVX2+FMA3; elsewhere, or with the purego build tag, the generic Go code
// runs. WHESTBAKE_CPU_KERNEL=avx2 or generic caps the choice through package
// simdcap, for tests and benchmarks of the kernel an AVX2-only host runs. Impl
// names the choice. All functions are safe for concurrent use on
// distinct output buffers.
package cpukernel
