// Package cudashim holds cuda.h, a header that lets gorgonia.org/cu v0.9.6 build against
// CUDA 13 headers: put this directory first on CGO_CFLAGS, as the header and
// docs/GPU.md say. The Go package exists only for the test that compiles the header
// against stand-ins of the CUDA 12 and 13 declarations it bridges.
package cudashim
