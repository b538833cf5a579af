//go:build linux || darwin

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread is the CPU time of the calling OS thread; ok is false where the
// OS offers no such clock. To read it twice for one piece of work, lock the
// goroutine to the thread with runtime.LockOSThread.
func Thread() (t time.Duration, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// Process is the user and system time of the whole process, all threads;
// 0 where getrusage fails, which it cannot for the calling process.
func Process() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
