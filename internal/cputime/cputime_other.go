//go:build !linux && !darwin

package cputime

import "time"

// Thread reports that this OS has no thread CPU clock here.
func Thread() (time.Duration, bool) { return 0, false }

// Process is not measured on this OS.
func Process() time.Duration { return 0 }
