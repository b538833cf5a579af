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

// Open returns the engine for device and sampler. "auto" picks CUDA when this
// binary has it and a GPU is present, else the CPU; the numpy sampler exists on
// the CPU only.
func Open(device string, sampler bakeapi.Sampler) (Engine, error) {
	switch device {
	case DeviceCPU:
		return CPU{}, nil
	case DeviceCUDA:
		if sampler == bakeapi.SamplerNumpy {
			return nil, fmt.Errorf("--device cuda: the numpy sampler runs on the CPU only; use --sampler philox or --device cpu")
		}
		return openCUDA()
	case DeviceAuto, "":
		if sampler == bakeapi.SamplerNumpy {
			return CPU{}, nil
		}
		if e, err := openCUDA(); err == nil {
			return e, nil
		}
		return CPU{}, nil
	}
	return nil, fmt.Errorf("--device %q unknown: use auto, cpu or cuda", device)
}

// cpuBrand names the host CPU for provenance.
func cpuBrand() string {
	if b := hostinfo.CPUBrand(); b != "" {
		return b
	}
	return runtime.GOARCH
}
