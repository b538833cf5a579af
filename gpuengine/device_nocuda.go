//go:build !cuda

package gpuengine

import "errors"

// openCUDA fails in the default build, which is cgo-free.
func openCUDA() (Engine, error) {
	return nil, errors.New("this whestbake binary was built without CUDA support; " +
		"build it with `make build-cuda` (go build -tags cuda) " +
		"on a machine with the CUDA toolkit, or use the cpu device")
}
