//go:build cuda

package cudacompile

/*
#cgo CFLAGS: -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lnvrtc
#include <stdlib.h>
#include <nvrtc.h>
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// Header is a file the source #includes; NVRTC resolves includes only among the
// headers it is handed.
type Header struct {
	Name, Source string
}

// Version is NVRTC's version.
func Version() (major, minor int, err error) {
	var ma, mi C.int
	if r := C.nvrtcVersion(&ma, &mi); r != C.NVRTC_SUCCESS {
		return 0, 0, nvrtcError("nvrtcVersion", r)
	}
	return int(ma), int(mi), nil
}

// Output is what one compilation produced.
type Output struct {
	// Image is a cubin, with Cubin true, of machine code for exactly one sm_XY, or PTX
	// text for the driver's JIT, ready for cuModuleLoadDataEx.
	Image []byte
	Cubin bool
	// Log is NVRTC's program log: warnings, and ptxas's resource report when the
	// options asked for it with --ptxas-options=-v and a cubin was made.
	Log string
}

// Report parses the ptxas resource report in the log, empty for PTX.
func (o Output) Report() Report { return ParseReport(o.Log) }

// Compile compiles source, named name in messages, with options. A --gpu-architecture
// of sm_XY makes a cubin, compute_XY PTX. A failed compile returns NVRTC's log in the
// error, which names the line and the reason.
func Compile(name, source string, headers []Header, options []string) (Output, error) {
	csrc, cname := C.CString(source), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	hsrc := make([]*C.char, len(headers))
	hname := make([]*C.char, len(headers))
	for i, h := range headers {
		hsrc[i], hname[i] = C.CString(h.Source), C.CString(h.Name)
		defer C.free(unsafe.Pointer(hsrc[i]))
		defer C.free(unsafe.Pointer(hname[i]))
	}
	var prog C.nvrtcProgram
	var ph, pn **C.char
	if len(headers) > 0 {
		// cgo forbids passing Go memory that holds Go pointers; these hold C pointers only.
		ph, pn = &hsrc[0], &hname[0]
	}
	if r := C.nvrtcCreateProgram(
		&prog,
		csrc,
		cname,
		C.int(len(headers)),
		ph,
		pn,
	); r != C.NVRTC_SUCCESS {
		return Output{}, nvrtcError("nvrtcCreateProgram "+name, r)
	}
	defer C.nvrtcDestroyProgram(&prog)

	copts := make([]*C.char, len(options))
	for i, o := range options {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	var po **C.char
	if len(options) > 0 {
		po = &copts[0]
	}
	compiled := C.nvrtcCompileProgram(prog, C.int(len(options)), po)
	log, err := programLog(prog)
	if err != nil {
		return Output{}, err
	}
	if compiled != C.NVRTC_SUCCESS {
		return Output{}, fmt.Errorf("%v:\n%s", nvrtcError("compiling "+name, compiled), log)
	}
	out := Output{Log: log, Cubin: isCubinArch(options)}
	var size C.size_t
	if out.Cubin {
		if r := C.nvrtcGetCUBINSize(prog, &size); r != C.NVRTC_SUCCESS {
			return Output{}, nvrtcError("nvrtcGetCUBINSize "+name, r)
		}
		out.Image = make([]byte, size)
		if size > 0 {
			if r := C.nvrtcGetCUBIN(
				prog,
				(*C.char)(unsafe.Pointer(&out.Image[0])),
			); r != C.NVRTC_SUCCESS {
				return Output{}, nvrtcError("nvrtcGetCUBIN "+name, r)
			}
		}
	} else {
		if r := C.nvrtcGetPTXSize(prog, &size); r != C.NVRTC_SUCCESS {
			return Output{}, nvrtcError("nvrtcGetPTXSize "+name, r)
		}
		out.Image = make([]byte, size)
		if size > 0 {
			if r := C.nvrtcGetPTX(
				prog,
				(*C.char)(unsafe.Pointer(&out.Image[0])),
			); r != C.NVRTC_SUCCESS {
				return Output{}, nvrtcError("nvrtcGetPTX "+name, r)
			}
		}
	}
	if len(out.Image) == 0 {
		return Output{}, fmt.Errorf("nvrtc: %s: compiled to an empty image", name)
	}
	return out, nil
}

func programLog(prog C.nvrtcProgram) (string, error) {
	var size C.size_t
	if r := C.nvrtcGetProgramLogSize(prog, &size); r != C.NVRTC_SUCCESS {
		return "", nvrtcError("nvrtcGetProgramLogSize", r)
	}
	if size <= 1 {
		return "", nil
	}
	buf := make([]byte, size)
	if r := C.nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&buf[0]))); r != C.NVRTC_SUCCESS {
		return "", nvrtcError("nvrtcGetProgramLog", r)
	}
	return string(buf[:size-1]), nil // NUL-terminated
}

func nvrtcError(what string, r C.nvrtcResult) error {
	return fmt.Errorf("nvrtc: %s: %s", what, C.GoString(C.nvrtcGetErrorString(r)))
}

// isCubinArch reports whether options ask for machine code with
// --gpu-architecture=sm_XY rather than PTX for compute_XY.
func isCubinArch(options []string) bool {
	for _, o := range options {
		if a, ok := strings.CutPrefix(o, "--gpu-architecture="); ok {
			return strings.HasPrefix(a, "sm_")
		}
	}
	return false
}
