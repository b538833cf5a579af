package gpuengine

import (
	"errors"
	"slices"
	"sync/atomic"
)

// runnerKey names a compiled, allocated runner of the CUDA engine: the network shape
// and, for the pipeline, its GEMM rows (which depend on the step).
type runnerKey struct {
	width, depth, rows int
}

// maxRunners bounds the runners one engine keeps. A runner holds a module and device
// buffers (the pipeline's two activation buffers are 256 MiB each); a worker that bakes
// several shapes, or whose chunk size varies, would otherwise keep every one it ever
// built. Four covers a bake's shape plus the bench's and calibration's.
const maxRunners = 4

// freer is anything that holds device resources until free.
type freer interface{ free() error }

// runnerCache keeps at most max runners, least recently used first out (freed).
type runnerCache[R freer] struct {
	max   int
	keys  []runnerKey // least recently used first
	items map[runnerKey]R
}

func newRunnerCache[R freer](max int) *runnerCache[R] {
	return &runnerCache[R]{max: max, items: map[runnerKey]R{}}
}

// get returns the runner for k and marks it most recently used.
func (c *runnerCache[R]) get(k runnerKey) (R, bool) {
	r, ok := c.items[k]
	if ok {
		c.touch(k)
	}
	return r, ok
}

func (c *runnerCache[R]) touch(k runnerKey) {
	if i := slices.Index(c.keys, k); i >= 0 {
		c.keys = append(c.keys[:i], c.keys[i+1:]...)
	}
	c.keys = append(c.keys, k)
}

// put adds r under k, freeing the least recently used runners beyond max first, so
// the device never holds more than max runners' memory at once.
func (c *runnerCache[R]) put(k runnerKey, r R) error {
	var errs []error
	for len(c.keys) >= c.max {
		old := c.keys[0]
		c.keys = c.keys[1:]
		errs = append(errs, c.items[old].free())
		delete(c.items, old)
	}
	c.items[k] = r
	c.touch(k)
	return errors.Join(errs...)
}

// close frees every runner.
func (c *runnerCache[R]) close() error {
	var errs []error
	for _, k := range c.keys {
		errs = append(errs, c.items[k].free())
	}
	c.keys, c.items = nil, map[runnerKey]R{}
	return errors.Join(errs...)
}

// deviceAccount counts what the CUDA engine holds on the device, so that a leak is a
// number a test can read (and a worker can log) rather than a slow out-of-memory.
type deviceAccount struct {
	buffers, bytes, modules, handles atomic.Int64
}

// Holdings is a snapshot of deviceAccount.
type Holdings struct {
	Buffers, Bytes, Modules, Handles int64
}

func (a *deviceAccount) snapshot() Holdings {
	return Holdings{a.buffers.Load(), a.bytes.Load(), a.modules.Load(), a.handles.Load()}
}
