package gpuengine

import (
	"errors"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
)

// runnerKey names a compiled, allocated runner of the CUDA engine: the network shape,
// the precision and, for the pipeline, its GEMM rows, which depend on the step.
type runnerKey struct {
	width, depth, rows int
	precision          bakeapi.Precision
}

// freer is anything that holds device resources until free.
type freer interface{ free() error }

// runnerCache keeps at most max runners, least recently used first out and freed.
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
	c.keys = nil
	c.items = map[runnerKey]R{}
	return errors.Join(errs...)
}

// Holdings is what the CUDA engines of a process hold on the device, as CUDAHoldings counts:
// a leak is a number a test can read rather than a slow out-of-memory.
type Holdings struct {
	Buffers, Bytes, Modules, Handles int64
}
