//go:build cuda

package gpuengine

/*
#cgo CFLAGS: -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -lcuda
#include <cuda.h>

// gorgonia.org/cu v0.9.6 has no cuFuncSetAttribute, and mlp_fused needs more than the
// default 48 KiB of dynamic shared memory.
static CUresult wb_set_max_dynamic_shared(CUfunction f, int bytes)
{
	return cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"
	"gorgonia.org/cu/nvrtc"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// cu.Function is a struct around one CUfunction handle in v0.9.6; setMaxDynamicShared
// reads that handle, so the layout is asserted here (a new gorgonia version that
// changes it fails to compile instead of misbehaving).
var (
	_ [unsafe.Sizeof(cu.Function{}) - unsafe.Sizeof(C.CUfunction(nil))]struct{}
	_ [unsafe.Sizeof(C.CUfunction(nil)) - unsafe.Sizeof(cu.Function{})]struct{}
)

func setMaxDynamicShared(fn cu.Function, bytes int) error {
	h := *(*C.CUfunction)(unsafe.Pointer(&fn))
	if r := C.wb_set_max_dynamic_shared(h, C.int(bytes)); r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuda: cannot allow %d bytes of shared memory for the kernel (CUresult %d)", bytes, int(r))
	}
	return nil
}

// cudaDevice is one GPU and the OS thread its context is current on. A CUDA context
// is current per thread and Go moves goroutines between threads, so every CUDA call
// runs through do, on one locked thread; mu serialises whole bakes on the device.
type cudaDevice struct {
	calls chan func()
	mu    sync.Mutex

	name                   string
	major, minor, sms      int
	maxShared              int   // opt-in shared memory per block
	totalMem               int64 // device memory in bytes, for monitoring (0 if the driver would not say)
	driver                 int   // CUDA version of the driver API, 1000·major + 10·minor
	headers                int   // CUDA version of the headers this binary was built with, same encoding
	nvrtcMajor, nvrtcMinor int
}

var theDevice struct {
	once sync.Once
	dev  *cudaDevice
	err  error
}

// sharedDevice opens GPU 0 once per process.
func sharedDevice() (*cudaDevice, error) {
	theDevice.once.Do(func() {
		d := &cudaDevice{calls: make(chan func())}
		ready := make(chan error)
		go d.serve(0, ready)
		if err := <-ready; err != nil {
			theDevice.err = err
			return
		}
		theDevice.dev = d
	})
	return theDevice.dev, theDevice.err
}

func (d *cudaDevice) serve(ordinal int, ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread carries the context until exit
	err := d.init(ordinal)
	ready <- err
	if err != nil {
		return
	}
	for f := range d.calls {
		f()
	}
}

// do runs f on the device thread.
func (d *cudaDevice) do(f func() error) error {
	done := make(chan error, 1)
	d.calls <- func() { done <- f() }
	return <-done
}

func (d *cudaDevice) init(ordinal int) error {
	n, err := cu.NumDevices()
	if err != nil {
		return fmt.Errorf("--device cuda: cannot count GPUs: %v", err)
	}
	if n <= ordinal {
		return errors.New("--device cuda: the CUDA driver reports no GPU; use --device cpu")
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return fmt.Errorf("--device cuda: GPU %d: %v", ordinal, err)
	}
	// The primary context is the one cuBLAS expects and needs no cuCtxCreate.
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return fmt.Errorf("--device cuda: cannot create a context on GPU %d: %v", ordinal, err)
	}
	if err := cu.SetCurrentContext(ctx); err != nil {
		return fmt.Errorf("--device cuda: cannot make the context current: %v", err)
	}
	if d.name, err = dev.Name(); err != nil {
		return fmt.Errorf("--device cuda: device name: %v", err)
	}
	if d.major, d.minor, err = dev.ComputeCapability(); err != nil {
		return fmt.Errorf("--device cuda: compute capability: %v", err)
	}
	if cc := 10*d.major + d.minor; cc < cudakernel.MinComputeCapability {
		return fmt.Errorf("--device cuda: %s has compute capability %d.%d; the kernels need %d.%d or newer (cp.async); use --device cpu",
			d.name, d.major, d.minor, cudakernel.MinComputeCapability/10, cudakernel.MinComputeCapability%10)
	}
	if mem, err := dev.TotalMem(); err == nil {
		d.totalMem = mem // monitoring only: a driver that will not say is no reason to refuse the GPU
	}
	if d.sms, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return fmt.Errorf("--device cuda: multiprocessor count: %v", err)
	}
	optin := cu.DeviceAttribute(C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	if d.maxShared, err = dev.Attribute(optin); err != nil {
		return fmt.Errorf("--device cuda: shared memory per block: %v", err)
	}
	d.driver = cu.Version()
	d.headers = int(C.CUDA_VERSION)
	if d.nvrtcMajor, d.nvrtcMinor, err = nvrtc.Version(); err != nil {
		return fmt.Errorf("--device cuda: NVRTC version: %v", err)
	}
	// NVRTC writes the PTX ISA of its own toolkit; an older driver cannot load it.
	if v := 1000*d.nvrtcMajor + 10*d.nvrtcMinor; v > d.driver {
		return fmt.Errorf("--device cuda: NVRTC %d.%d emits PTX the driver (CUDA %d.%d) cannot load; install a driver for CUDA %d.%d or newer, or an older NVRTC",
			d.nvrtcMajor, d.nvrtcMinor, d.driver/1000, d.driver%1000/10, d.nvrtcMajor, d.nvrtcMinor)
	}
	return nil
}

// String describes the device for metadata.
func (d *cudaDevice) String() string {
	return fmt.Sprintf("%s (compute %d.%d, %d SMs, driver CUDA %d.%d, built with CUDA %d.%d, NVRTC %d.%d)", d.name, d.major,
		d.minor, d.sms, d.driver/1000, d.driver%1000/10, d.headers/1000, d.headers%1000/10, d.nvrtcMajor, d.nvrtcMinor)
}

// compile builds one of the kernels' sources with NVRTC and loads it. Device thread only.
func (d *cudaDevice) compile(name, source string, defines []string) (cu.Module, error) {
	hs := cudakernel.Headers()
	inc := make([]nvrtc.Include, len(hs))
	for i, h := range hs {
		inc[i] = nvrtc.Include{Source: h.Source, Name: h.Name}
	}
	prog, err := nvrtc.CreateProgram(source, name, inc...)
	if err != nil {
		return cu.Module{}, fmt.Errorf("nvrtc: %s: %v", name, err)
	}
	defer prog.Destroy()
	if err := prog.Compile(cudakernel.Options(d.major, d.minor, defines)...); err != nil {
		log, _ := prog.GetLog()
		return cu.Module{}, fmt.Errorf("nvrtc: compiling %s %v: %v\n%s", name, defines, err, log)
	}
	ptx, err := prog.GetPTX()
	if err != nil {
		return cu.Module{}, fmt.Errorf("nvrtc: %s: PTX: %v", name, err)
	}
	// The driver's JIT assembles the PTX for the device here. When it fails, the
	// CUresult says only that (e.g. "InvalidPtx"); its error log names the line and
	// the reason, so it goes into the error.
	jitLog := &cu.JITErrorLogBuffer{Buffer: make([]byte, jitLogBytes)}
	mod, err := cu.LoadDataEx(ptx, jitLog)
	if err != nil {
		return cu.Module{}, fmt.Errorf("cuda: loading %s %v: %v\n%s", name, defines, err, cString(jitLog.Buffer))
	}
	return mod, nil
}

// jitLogBytes bounds the JIT's error log; the driver truncates a longer one.
const jitLogBytes = 16 << 10

// cString is the NUL-terminated string at the start of b.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// readTotals waits for the launches, then returns the carry-save totals in words
// (decoded) or the divergence the kernels flagged. Device thread only.
func readTotals(words, flag cu.DevicePtr, host []uint64, nv int) ([]exact.Acc, error) {
	if err := cu.Synchronize(); err != nil {
		return nil, fmt.Errorf("cuda: kernel failed: %v", err)
	}
	var bad uint64
	if err := cu.MemcpyDtoH(unsafe.Pointer(&bad), flag, 8); err != nil {
		return nil, fmt.Errorf("cuda: reading the divergence flag: %v", err)
	}
	if bad != 0 {
		return nil, errDiverged
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&host[0]), words, int64(8*len(host))); err != nil {
		return nil, fmt.Errorf("cuda: reading the totals: %v", err)
	}
	return cudakernel.DecodeWords(host, nv), nil
}

// clearTotals zeroes a launch sequence's carry-save words and divergence flag.
func clearTotals(words, flag cu.DevicePtr, nWords int) error {
	if err := cu.MemsetD32(words, 0, int64(2*nWords)); err != nil {
		return fmt.Errorf("cuda: clearing the totals: %v", err)
	}
	if err := cu.MemsetD32(flag, 0, 2); err != nil {
		return fmt.Errorf("cuda: clearing the divergence flag: %v", err)
	}
	return nil
}

var errDiverged = errors.New("activations left the exact accumulator's range (|sum| ≥ 2^103, NaN or Inf): the network diverges")

// alloc allocates device memory for n bytes. Device thread only.
func alloc(what string, n int64) (cu.DevicePtr, error) {
	p, err := cu.MemAlloc(n)
	if err != nil {
		return 0, fmt.Errorf("cuda: allocating %d bytes for %s: %v", n, what, err)
	}
	return p, nil
}
