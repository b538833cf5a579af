package gpuengine

import "time"

// Phases is where the cuBLAS path's wall time goes, as CuBLASPhases measures it in cuda
// builds: GPU time of each kind of operation, measured with CUDA events around every
// launch and copy, and Idle, the rest of the wall time: the GPU waiting for the host
// through launch gaps, the synchronisation and exact additions between steps.
type Phases struct {
	Wall                      time.Duration
	RNG, GEMM, Reduce, Copies time.Duration
}

// Idle is the wall time no measured GPU operation covers.
func (p Phases) Idle() time.Duration {
	return max(0, p.Wall-p.RNG-p.GEMM-p.Reduce-p.Copies)
}
