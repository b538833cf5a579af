package cudakernel

import "fmt"

// CheckToolkit decides whether a driver of CUDA version driver, 1000·major + 10·minor
// as cuDriverGetVersion reports it, can run what an NVRTC of version
// nvrtcMajor.nvrtcMinor builds. The engine loads cubins, and NVIDIA's
// minor version compatibility, which the CUDA Compatibility guide documents from CUDA
// 11 on, lets a driver run cubins of any toolkit of its
// own major version: a 13.0 driver with a 13.1 NVRTC is fine. A newer major is not.
func CheckToolkit(nvrtcMajor, nvrtcMinor, driver int) error {
	if nvrtcMajor > driver/1000 {
		return fmt.Errorf(
			"NVRTC %d.%d builds kernels for CUDA %d, the driver supports CUDA %d.%d; "+
				"install a driver for CUDA %d or newer, or a CUDA %d toolkit",
			nvrtcMajor,
			nvrtcMinor,
			nvrtcMajor,
			driver/1000,
			driver%1000/10,
			nvrtcMajor,
			driver/1000,
		)
	}
	return nil
}

// CheckPTX decides whether the driver can JIT the PTX an NVRTC writes: PTX carries the
// ISA version of its toolkit, and a driver loads only ISAs it knows, so the driver must
// be at least as new as NVRTC, minor version included. Only the fallback needs this.
func CheckPTX(nvrtcMajor, nvrtcMinor, driver int) error {
	if v := 1000*nvrtcMajor + 10*nvrtcMinor; v > driver {
		return fmt.Errorf(
			"the PTX fallback needs a driver for CUDA %d.%d or newer (this one supports %d.%d)",
			nvrtcMajor,
			nvrtcMinor,
			driver/1000,
			driver%1000/10,
		)
	}
	return nil
}
