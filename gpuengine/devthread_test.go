package gpuengine

import (
	"errors"
	"fmt"
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
		return fmt.Errorf("%d", element(nil, 0)) // index out of range: a runtime panic
	})
	if err == nil || !strings.Contains(err.Error(), "panic on the device thread") ||
		!strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("err = %v", err)
	}
	want := errors.New("next call")
	if err := th.do(func() error { return want }); err != want {
		t.Fatalf("the thread must go on serving after a panic: %v", err)
	}
}

func TestDeviceThreadInitFailureIsReturned(t *testing.T) {
	if _, err := startDeviceThread(func() error { panic("no driver") }); err == nil ||
		!strings.Contains(err.Error(), "no driver") {
		t.Fatalf("err = %v", err)
	}
}

// element is s[i], a runtime panic when i is out of range.
func element(s []int, i int) int { return s[i] }
