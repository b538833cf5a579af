//go:build !amd64 || purego

package philox

// Without the amd64 assembly, on another GOARCH or with the purego tag, Fill always
// takes the scalar path.
func fillSIMD(s Sampler, dst []float32, first int64, rows int) bool { return false }
