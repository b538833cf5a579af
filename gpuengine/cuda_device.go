//go:build cuda

package gpuengine

/*
#cgo CFLAGS: -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcuda
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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/whestbake/whestbake/gpuengine/internal/cudacompile"
	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
)

// cu.Function is a struct around one CUfunction handle in v0.9.6; setMaxDynamicShared
// reads that handle, so the layout is asserted here: a new gorgonia version that
// changes it fails to compile instead of misbehaving.
var (
	_ [unsafe.Sizeof(cu.Function{}) - unsafe.Sizeof(C.CUfunction(nil))]struct{}
	_ [unsafe.Sizeof(C.CUfunction(nil)) - unsafe.Sizeof(cu.Function{})]struct{}
)

func setMaxDynamicShared(fn cu.Function, bytes int) error {
	h := *(*C.CUfunction)(unsafe.Pointer(&fn))
	if r := C.wb_set_max_dynamic_shared(h, C.int(bytes)); r != C.CUDA_SUCCESS {
		return fmt.Errorf(
			"cuda: cannot allow %d bytes of shared memory for the kernel (CUresult %d)",
			bytes,
			int(r),
		)
	}
	return nil
}

// cudaDevice is one GPU and the OS thread its context is current on, deviceThread;
// mu serialises whole bakes on the device.
type cudaDevice struct {
	thread *deviceThread
	mu     sync.Mutex
	dev    cu.Device

	name              string
	major, minor, sms int
	maxShared         int // opt-in shared memory per block
	// totalMem is the device memory in bytes, for monitoring; 0 if the
	// driver would not say.
	totalMem int64
	driver   int // CUDA version of the driver API, 1000·major + 10·minor
	// headers is the CUDA version of the headers this binary was built
	// with, encoded as driver is.
	headers                int
	nvrtcMajor, nvrtcMinor int
}

// theDevice is GPU 0, opened by the first engine and released by the last one's Close.
var theDevice struct {
	mu   sync.Mutex
	dev  *cudaDevice
	refs int
}

// deviceAccount counts what the CUDA engine holds on the device, so that a leak is a
// number a test can read and a worker can log rather than a slow out-of-memory.
type deviceAccount struct {
	buffers, bytes, modules, handles atomic.Int64
}

func (a *deviceAccount) snapshot() Holdings {
	return Holdings{a.buffers.Load(), a.bytes.Load(), a.modules.Load(), a.handles.Load()}
}

// cudaHoldings counts every module, buffer and cuBLAS handle the engines hold, across
// the device's lifetimes; tests read it after Close.
var cudaHoldings deviceAccount

// acquireDevice opens GPU 0 if no engine holds it and counts one more holder.
func acquireDevice() (*cudaDevice, error) {
	theDevice.mu.Lock()
	defer theDevice.mu.Unlock()
	if theDevice.dev == nil {
		d := &cudaDevice{}
		t, err := startDeviceThread(func() error { return d.init(0) })
		if err != nil {
			return nil, err
		}
		d.thread = t
		theDevice.dev = d
	}
	theDevice.refs++
	return theDevice.dev, nil
}

// releaseDevice drops one holder; the last one releases the primary context and ends
// the device thread.
func releaseDevice() error {
	theDevice.mu.Lock()
	defer theDevice.mu.Unlock()
	if theDevice.refs--; theDevice.refs > 0 {
		return nil
	}
	d := theDevice.dev
	theDevice.dev = nil
	err := d.do(func() error {
		if err := d.dev.ReleasePrimaryCtx(); err != nil {
			return fmt.Errorf("cuda: releasing the context: %v", err)
		}
		return nil
	})
	d.thread.stop()
	return err
}

// do runs f on the device thread.
func (d *cudaDevice) do(f func() error) error { return d.thread.do(f) }

func (d *cudaDevice) init(ordinal int) error {
	n, err := cu.NumDevices()
	if err != nil {
		return fmt.Errorf("cannot count GPUs: %v", err)
	}
	if n <= ordinal {
		return errors.New("the CUDA driver reports no GPU; use the cpu device")
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return fmt.Errorf("GPU %d: %v", ordinal, err)
	}
	d.dev = dev
	// The primary context is the one cuBLAS expects and needs no cuCtxCreate.
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return fmt.Errorf(
			"cannot create a context on GPU %d "+
				"(in exclusive-process compute mode another process may hold it): %v",
			ordinal,
			err,
		)
	}
	if err := cu.SetCurrentContext(ctx); err != nil {
		return fmt.Errorf("cannot make the context current: %v", err)
	}
	if d.name, err = dev.Name(); err != nil {
		return fmt.Errorf("device name: %v", err)
	}
	if d.major, d.minor, err = dev.ComputeCapability(); err != nil {
		return fmt.Errorf("compute capability: %v", err)
	}
	if cc := 10*d.major + d.minor; cc < cudakernel.MinComputeCapability {
		return fmt.Errorf(
			"%s has compute capability %d.%d; the kernels need %d.%d or newer (cp.async); "+
				"use the cpu device",
			d.name,
			d.major,
			d.minor,
			cudakernel.MinComputeCapability/10,
			cudakernel.MinComputeCapability%10,
		)
	}
	if mem, err := dev.TotalMem(); err == nil {
		// Monitoring only: a driver that will not say is no reason to refuse
		// the GPU.
		d.totalMem = mem
	}
	if d.sms, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return fmt.Errorf("multiprocessor count: %v", err)
	}
	optin := cu.DeviceAttribute(C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	if d.maxShared, err = dev.Attribute(optin); err != nil {
		return fmt.Errorf("shared memory per block: %v", err)
	}
	d.driver = cu.Version()
	d.headers = int(C.CUDA_VERSION)
	if d.nvrtcMajor, d.nvrtcMinor, err = cudacompile.Version(); err != nil {
		return fmt.Errorf("NVRTC version: %v", err)
	}
	return cudakernel.CheckToolkit(d.nvrtcMajor, d.nvrtcMinor, d.driver)
}

// cudaVersion is the driver's CUDA version, e.g. "CUDA 13.0".
func (d *cudaDevice) cudaVersion() string {
	return fmt.Sprintf("CUDA %d.%d", d.driver/1000, d.driver%1000/10)
}

// String describes the device for metadata.
func (d *cudaDevice) String() string {
	return fmt.Sprintf(
		"%s (compute %d.%d, %d SMs, driver CUDA %d.%d, built with CUDA %d.%d, NVRTC %d.%d)",
		d.name,
		d.major,
		d.minor,
		d.sms,
		d.driver/1000,
		d.driver%1000/10,
		d.headers/1000,
		d.headers%1000/10,
		d.nvrtcMajor,
		d.nvrtcMinor,
	)
}

// module is a loaded kernel module and how it was built.
type module struct {
	mod cu.Module
	// target is "cubin sm_XY" or "PTX compute_XY (driver JIT)".
	target string
	// report is ptxas's resource report of a cubin, nil for PTX: the driver's JIT
	// reports nothing, so ask the loaded functions' attributes instead.
	report cudacompile.Report
	notes  []string // why the PTX fallback was taken, if it was
	// sum is the hex sha256 of the image loaded: the machine code, or the PTX the
	// driver's JIT assembled.
	sum string
}

// compile builds one of the kernels' sources with NVRTC and loads it. Device thread
// only. It builds a cubin for the device's own sm_XY, so the code that runs is what
// NVRTC's ptxas assembled and reported on; if the driver refuses the cubin it falls
// back to PTX for the driver's JIT, and says so in notes.
func (d *cudaDevice) compile(name, source string, defines []string) (*module, error) {
	hs := cudakernel.Headers()
	headers := make([]cudacompile.Header, len(hs))
	for i, h := range hs {
		headers[i] = cudacompile.Header{Name: h.Name, Source: h.Source}
	}
	target := cudakernel.Target{Major: d.major, Minor: d.minor}
	out, err := cudacompile.Compile(name, source, headers, cudakernel.Options(target, defines))
	if err != nil {
		return nil, fmt.Errorf("%v (defines %v)", err, defines)
	}
	mod, loadErr := loadImage(out.Image)
	if loadErr == nil {
		cudaHoldings.modules.Add(1)
		return &module{
			mod:    mod,
			target: "cubin " + target.Arch(),
			report: out.Report(),
			sum:    imageSum(out.Image),
		}, nil
	}
	note := fmt.Sprintf(
		"the driver refused the %s cubin of %s (%v); falling back to PTX for its JIT",
		target.Arch(),
		name,
		loadErr,
	)
	target.PTX = true
	if err := cudakernel.CheckPTX(d.nvrtcMajor, d.nvrtcMinor, d.driver); err != nil {
		return nil, fmt.Errorf("cuda: %s; %v", note, err)
	}
	if out, err = cudacompile.Compile(
		name,
		source,
		headers,
		cudakernel.Options(target, defines),
	); err != nil {
		return nil, fmt.Errorf("%v (defines %v)", err, defines)
	}
	if mod, err = loadImage(out.Image); err != nil {
		return nil, fmt.Errorf(
			"cuda: loading %s %v: cubin: %v; PTX: %v",
			name,
			defines,
			loadErr,
			err,
		)
	}
	cudaHoldings.modules.Add(1)
	return &module{
		mod:    mod,
		target: "PTX " + target.Arch() + " (driver JIT)",
		notes:  []string{note},
		sum:    imageSum(out.Image),
	}, nil
}

func imageSum(image []byte) string {
	s := sha256.Sum256(image)
	return hex.EncodeToString(s[:])
}

// loadImage loads a cubin or PTX. When the driver fails, the CUresult says only that,
// e.g. "InvalidPtx"; its error log names the line and the reason, so it goes into
// the error.
func loadImage(image []byte) (cu.Module, error) {
	jitLog := &cu.JITErrorLogBuffer{Buffer: make([]byte, jitLogBytes)}
	mod, err := cu.LoadDataEx(string(image), jitLog)
	if err != nil {
		return cu.Module{}, fmt.Errorf("%v\n%s", err, cString(jitLog.Buffer))
	}
	return mod, nil
}

// unload releases a module. Device thread only.
func (m *module) unload() error {
	if err := m.mod.Unload(); err != nil {
		return fmt.Errorf("cuda: unloading a module: %v", err)
	}
	cudaHoldings.modules.Add(-1)
	return nil
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

// readTotals waits for the launches, then returns the totals decoded from their
// carry-save words, or the divergence the kernels flagged. Device thread only.
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

var errDiverged = errors.New(
	"activations left the exact accumulator's range (|sum| ≥ 2^103, NaN or Inf): " +
		"the network diverges",
)

// buffer is device memory of a known size: the accounting needs it back at free.
type buffer struct {
	ptr  cu.DevicePtr
	size int64
}

// alloc allocates device memory for n bytes. Device thread only.
func alloc(what string, n int64) (buffer, error) {
	p, err := cu.MemAlloc(n)
	if err != nil {
		return buffer{}, fmt.Errorf("cuda: allocating %d bytes for %s: %v", n, what, err)
	}
	cudaHoldings.buffers.Add(1)
	cudaHoldings.bytes.Add(n)
	return buffer{p, n}, nil
}

// freeBuffers releases bs. Zero buffers are skipped, so a runner whose construction
// failed half-way frees what it had. Device thread only.
func freeBuffers(bs ...buffer) error {
	var errs []error
	for _, b := range bs {
		if b.ptr == 0 {
			continue
		}
		if err := cu.MemFree(b.ptr); err != nil {
			errs = append(errs, fmt.Errorf("cuda: freeing %d bytes: %v", b.size, err))
			continue
		}
		cudaHoldings.buffers.Add(-1)
		cudaHoldings.bytes.Add(-b.size)
	}
	return errors.Join(errs...)
}
