//go:build amd64 && !purego

package philox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/whestbake/whestbake/gpuengine/internal/simdcap"
)

// Register every assembly kernel this CPU runs with the fast-path tests.
func init() {
	for _, k := range kernels {
		impls = append(
			impls,
			impl{
				k.name,
				k.fill,
				func(ra, rb []uint32) ([]float32, []float32) { return normalsOf(k, ra, rb) },
			},
		)
	}
}

// normalsOf runs the kernel's Box–Muller routine on word pairs (ra[i], rb[i]),
// two pairs per slot, and returns Pair's two outputs for each.
func normalsOf(k kernel, ra, rb []uint32) (z0, z1 []float32) {
	lane := make([]int, k.lanes) // inverse of laneSlot
	for l := range lane {
		lane[laneSlot(l, k.lanes)] = l
	}
	groups := (len(ra) + 2*k.lanes - 1) / (2 * k.lanes)
	words := make([]uint32, groups*4*k.lanes)
	for i := range ra {
		slot, second := i/2, i%2
		base := slot/k.lanes*4*k.lanes + 2*second*k.lanes + lane[slot%k.lanes]
		words[base], words[base+k.lanes] = ra[i], rb[i]
	}
	out := make([]float32, groups*4*k.lanes)
	k.normals(&out[0], &words[0], groups)
	z0, z1 = make([]float32, len(ra)), make([]float32, len(ra))
	for i := range ra {
		z0[i], z1[i] = out[2*i], out[2*i+1]
	}
	return z0, z1
}

// WHESTBAKE_CPU_KERNEL caps the sampler's kernels as it caps the forward
// kernel's: the test binary runs itself with each value and reports its list.
func TestKernelCeiling(t *testing.T) {
	if os.Getenv("PHILOX_REPORT_KERNELS") != "" {
		names := []string{}
		for _, k := range kernels {
			names = append(names, k.name)
		}
		fmt.Printf("kernels=%s\n", strings.Join(names, ","))
		return
	}
	all := "kernels="
	switch {
	case cpu.X86.HasAVX2 && cpu.X86.HasAVX512F:
		all += "avx512,avx2"
	case cpu.X86.HasAVX2:
		all += "avx2"
	}
	avx2 := "kernels="
	if cpu.X86.HasAVX2 {
		avx2 += "avx2"
	}
	for value, want := range map[string]string{
		"":        all,
		"avx512":  all,
		"avx2":    avx2,
		"generic": "kernels=",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelCeiling$")
		cmd.Env = append(os.Environ(), "PHILOX_REPORT_KERNELS=1", simdcap.Env+"="+value)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want+"\n") {
			t.Errorf("%s=%q: %v\n%s\nwant %q", simdcap.Env, value, err, out, want)
		}
	}
}
