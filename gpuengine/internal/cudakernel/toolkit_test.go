package cudakernel_test

import (
	"testing"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
)

// A 13.0 driver with a 13.1 toolkit image ran no test when the gate compared PTX
// versions; cubins need only the same major version.
func TestToolkitGate(t *testing.T) {
	for _, c := range []struct {
		nvMajor, nvMinor, driver int
		cubin, ptx               bool
	}{
		{13, 0, 13000, true, true},
		{13, 1, 13000, true, false}, // the case the old gate refused
		{12, 8, 13000, true, true},
		{11, 8, 12040, true, true},
		{14, 0, 13020, false, false},
		{13, 0, 12090, false, false},
	} {
		if got := cudakernel.CheckToolkit(c.nvMajor, c.nvMinor, c.driver) == nil; got != c.cubin {
			t.Errorf(
				"NVRTC %d.%d, driver %d: cubin allowed = %v",
				c.nvMajor,
				c.nvMinor,
				c.driver,
				got,
			)
		}
		if got := cudakernel.CheckPTX(c.nvMajor, c.nvMinor, c.driver) == nil; got != c.ptx {
			t.Errorf(
				"NVRTC %d.%d, driver %d: PTX allowed = %v",
				c.nvMajor,
				c.nvMinor,
				c.driver,
				got,
			)
		}
	}
}
