// Package cudacheck is the kernel half of `make cuda-check`, which needs the CUDA
// toolkit but no GPU: NVRTC compiles mlp_fused, every candidate of
// cudakernel.TilingCandidates, mlp_tf32x3, as cudakernel.PlanTF32 plans it, and the
// pipeline kernels for every shape the tests run, with the engine's own
// options, cudakernel.Options, into cubins for sm_90 and sm_80 — exactly what the
// engine loads — and ptxas's resource report in NVRTC's log must show no spill and no
// local memory. The PTX the engine falls back to is compiled too.
//
// It is a package of its own because the cuda build of gpuengine imports
// gorgonia.org/cu, whose init exits the process when cuInit finds no GPU; this test
// links NVRTC only, through gpuengine/internal/cudacompile, so it runs on a build
// machine. The Go package exists only for the test, nvrtc_test.go under the `cuda` build tag.
package cudacheck
