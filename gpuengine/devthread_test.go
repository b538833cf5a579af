package gpuengine

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// The device thread is the only place CUDA calls run, in the default build too, so its
// contract is tested here: one OS thread for every call, and a panic fails one call.
func TestDeviceThreadRunsEveryCallOnOneOSThread(t *testing.T) {
	var initTid int
	th, err := startDeviceThread(func() error { initTid = syscall.Gettid(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer th.stop()
	for i := 0; i < 100; i++ {
		var tid int
		if err := th.do(func() error { tid = syscall.Gettid(); return nil }); err != nil {
			t.Fatal(err)
		}
		if tid != initTid {
			t.Fatalf("call %d ran on thread %d, init on %d", i, tid, initTid)
		}
	}
}

func TestDeviceThreadTurnsAPanicIntoAnErrorOfThatCall(t *testing.T) {
	th, err := startDeviceThread(func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer th.stop()
	err = th.do(func() error {
		var runners map[runnerKey]int
		runners[runnerKey{}] = 1 // assignment to a nil map: a runtime panic
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "panic on the device thread") || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("err = %v", err)
	}
	want := errors.New("next call")
	if err := th.do(func() error { return want }); err != want {
		t.Fatalf("the thread must go on serving after a panic: %v", err)
	}
}

func TestDeviceThreadInitFailureIsReturned(t *testing.T) {
	if _, err := startDeviceThread(func() error { panic("no driver") }); err == nil || !strings.Contains(err.Error(), "no driver") {
		t.Fatalf("err = %v", err)
	}
}
