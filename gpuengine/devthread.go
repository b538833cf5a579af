package gpuengine

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// deviceThread runs closures on one OS thread that never changes. A CUDA context is
// current per thread and Go moves goroutines between threads, so every CUDA call of
// a device goes through do. The thread stays locked until stop: a thread that ends
// locked is destroyed with whatever CUDA had made current on it.
type deviceThread struct {
	calls chan func()
}

// startDeviceThread starts the thread and runs init on it first; an init error stops
// the thread and is returned.
func startDeviceThread(init func() error) (*deviceThread, error) {
	t := &deviceThread{calls: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := guard(init)
		ready <- err
		if err != nil {
			return
		}
		for f := range t.calls {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return t, nil
}

// do runs f on the thread and returns its error. A panic in f — a bug, or a Go
// runtime error inside a cgo-adjacent closure — becomes an error of that one call,
// with its stack, instead of ending the process: a test fails, a bake's activity
// fails and is retried, and the thread goes on serving.
func (t *deviceThread) do(f func() error) error {
	done := make(chan error, 1)
	t.calls <- func() { done <- guard(f) }
	return <-done
}

// stop ends the thread after the calls already handed to it.
func (t *deviceThread) stop() { close(t.calls) }

func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cuda: panic on the device thread: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}
