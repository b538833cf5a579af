package gpuengine

import (
	"fmt"
	"runtime"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/hostinfo"
)

// Device choices, as in whestbench: explicit choices are honoured or refused, never swapped.
const (
	DeviceAuto = "auto"
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
)

// FieldDevice is the field of Open's errors, the device choice: the CLI
// names it --device, a worker's config worker.device, as bakeapi.Rename maps it.
const FieldDevice = "device"

// deviceErr is a problem with the device choice, as a field error.
func deviceErr(format string, a ...any) error {
	return bakeapi.FieldErrors{{Field: FieldDevice, Problem: fmt.Sprintf(format, a...)}}
}

// Open returns the engine for device and sampler. "auto" picks CUDA when this
// binary has it and a GPU is present, else the CPU; the numpy sampler exists on
// the CPU only. Its errors are field errors of FieldDevice.
func Open(device string, sampler bakeapi.Sampler) (Engine, error) {
	switch device {
	case DeviceCPU:
		return CPU{}, nil
	case DeviceCUDA:
		if sampler == bakeapi.SamplerNumpy {
			return nil, deviceErr(
				"cuda: the numpy sampler runs on the CPU only; " +
					"use the philox sampler or the cpu device",
			)
		}
		e, err := openCUDA()
		if err != nil {
			return nil, deviceErr("cuda: %v", err)
		}
		return e, nil
	case DeviceAuto, "":
		if sampler == bakeapi.SamplerNumpy {
			return CPU{}, nil
		}
		if e, err := openCUDA(); err == nil {
			return e, nil
		}
		return CPU{}, nil
	}
	return nil, deviceErr("%q unknown: use auto, cpu or cuda", device)
}

// cpuBrand names the host CPU for provenance.
func cpuBrand() string {
	if b := hostinfo.CPUBrand(); b != "" {
		return b
	}
	return runtime.GOARCH
}
