//go:build !linux && !darwin

package gpuengine

import "time"

// threadCPU reports that this OS has no thread CPU clock here, and
// ProfilePhilox and KernelRate refuse to run.
func threadCPU() (time.Duration, bool) { return 0, false }

func processCPU() time.Duration { return 0 }
