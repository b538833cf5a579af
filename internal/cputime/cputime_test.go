package cputime

import (
	"runtime"
	"testing"
	"time"
)

// A thread that spins for 50 ms of its own CPU time has used about that much
// by its clock, and the process at least as much.
func TestThreadAndProcessCountSpinning(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := Thread()
	if !ok {
		t.Skip("no thread CPU clock on this OS")
	}
	p0 := Process()
	for {
		if now, _ := Thread(); now-t0 >= 50*time.Millisecond {
			break
		}
	}
	t1, _ := Thread()
	if d := t1 - t0; d < 50*time.Millisecond || d > 80*time.Millisecond {
		t.Errorf("thread CPU advanced %v, want about 50 ms", d)
	}
	if d := Process() - p0; d < 45*time.Millisecond {
		t.Errorf("process CPU advanced %v while a thread spun 50 ms", d)
	}
}

func TestAddChainAddsAndTheClockIsPlausible(t *testing.T) {
	if !haveChain {
		if _, err := CoreClock(1); err == nil {
			t.Fatal("CoreClock without the assembly gave no error")
		}
		t.Skip("the chain is amd64 assembly")
	}
	if got := addChain(3); got != 300 {
		t.Fatalf("addChain(3) = %d, want 300", got)
	}
	hz, err := CoreClock(2e8)
	if err != nil {
		t.Fatal(err)
	}
	// Any x86-64 core of this century, however loaded: the chain can only run
	// slower than one add a cycle, never faster.
	if hz < 0.5e9 || hz > 7e9 {
		t.Errorf("core clock %.2f GHz", hz/1e9)
	}
}
