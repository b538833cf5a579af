// Package seeds reproduces numpy's randomness bit for bit, as whestbench
// uses it: SeedSequence, the PCG64 bit generator behind default_rng, numpy's
// float64 and float32 ziggurat standard normals, the seed protocols that
// turn one input seed into weight and sample streams, estimator and name
// seeds, protocol 4.0's keyed BLAKE2b included, and the weights of
// whestbench's sample_mlp.
//
// Where numpy leans on the C library, for exp, log1p and log1pf in the rare
// ziggurat paths, the package reproduces glibc's results; see exp.go and
// log1p.go for what was measured and what can still differ on other hosts.
package seeds
