package cudacompile

import "strings"

// isCubinArch reports whether options ask for machine code (--gpu-architecture=sm_XY)
// rather than PTX (compute_XY).
func isCubinArch(options []string) bool {
	for _, o := range options {
		if a, ok := strings.CutPrefix(o, "--gpu-architecture="); ok {
			return strings.HasPrefix(a, "sm_")
		}
	}
	return false
}
