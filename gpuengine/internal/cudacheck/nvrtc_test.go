//go:build cuda

package cudacheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/cu/nvrtc"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
)

// archs are the architectures checked, each with the opt-in shared memory per block
// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) the engine plans the fused
// shape with there: the H100 the engine targets, and the A100 for sm_80, the oldest
// architecture the kernels run on (cudakernel.MinComputeCapability).
var archs = []struct {
	major, minor, maxShared int
}{{9, 0, 232448}, {8, 0, 166912}}

// networks are the W×D networks the tests run the kernels on: gpuengine/cuda_test.go on
// the GPU and the host harness (cudakernel/host_test.go) on the CPU. A network added to
// those tests belongs here too, so that make cuda-check compiles its shapes.
var networks = []struct{ w, d int }{
	{256, 8}, {256, 2}, {64, 3}, {17, 2}, {8, 3}, {100, 4}, {1, 1}, {512, 2}, {1000, 1}, // cudaShapes
	{32, 4}, {8, 2}, // resume, divergence and refusals
	{100, 2}, // the host harness's bakeCases not above
}

// tilings are the host harness's other tilings of its 17×2 and 64×3 networks (fused
// shapes PlanFused never picks), compiled so the GPU could run what the harness checks.
var tilings = []struct{ w, d, ct, tm, rt, ks int }{
	{17, 2, 4, 32, 1, 4}, {17, 2, 8, 64, 4, 8}, {17, 2, 16, 32, 2, 16},
	{64, 3, 4, 32, 1, 4}, {64, 3, 8, 64, 4, 8}, {64, 3, 16, 32, 2, 16},
}

// Every kernel shape the tests use compiles with NVRTC exactly as the engine compiles it,
// and ptxas assembles it without spilling: a spill or any local memory would put the
// fused kernel's register fragment in DRAM-backed memory, far beyond its budget. The
// driver's JIT, not this ptxas, assembles the PTX on the GPU, so the device's own check
// is gpuengine's TestCUDAFusedResources; this one keeps the sources from rotting.
func TestKernelsCompileWithoutSpills(t *testing.T) {
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		if os.Getenv("PTXAS_REQUIRED") != "" {
			t.Fatal("ptxas not on PATH (PTXAS_REQUIRED is set): install the CUDA toolkit or put its bin/ on PATH")
		}
		t.Skip("ptxas not on PATH: the NVRTC compile and resource check are skipped")
	}
	major, minor, err := nvrtc.Version()
	if err != nil {
		t.Fatal(err)
	}
	v, err := exec.Command(ptxas, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %d.%d; %s", major, minor, lastLine(string(v)))
	for _, a := range archs {
		seen := map[string]bool{}
		check := func(file, source, shape string, defines []string, entries ...string) {
			if key := strings.Join(defines, " "); !seen[file+key] {
				seen[file+key] = true
				compile(t, ptxas, a.major, a.minor, file, source, shape, defines, entries)
			}
		}
		for _, n := range networks {
			s, err := cudakernel.PlanFused(n.w, n.d, a.maxShared)
			if err != nil {
				t.Fatal(err)
			}
			check("fused.cu", cudakernel.FusedSource, s.String(), s.Defines(), "mlp_fused")
			p := cudakernel.PlanPipeline(n.w, n.d, cudakernel.DefaultStep)
			check("pipeline.cu", cudakernel.PipelineSource, fmt.Sprintf("pipeline W%d D%d", p.W, p.D), p.Defines(),
				"gen_inputs", "layer_reference", "relu_tilesum")
		}
		for _, c := range tilings {
			wp := (c.w + c.ct - 1) / c.ct * c.ct
			s := cudakernel.FusedShape{W: c.w, D: c.d, WP: wp, TM: c.tm, RT: c.rt, CT: c.ct, KS: c.ks}
			if err := s.Validate(a.maxShared); err != nil {
				t.Fatal(err)
			}
			check("fused.cu", cudakernel.FusedSource, s.String(), s.Defines(), "mlp_fused")
		}
	}
}

// compile builds one source for compute_<major><minor> as gpuengine's cudaDevice.compile
// does, assembles the PTX for sm_<major><minor> with ptxas -v, logs each entry's
// resources and fails on a spill or local memory.
func compile(t *testing.T, ptxas string, major, minor int, file, source, shape string, defines, entries []string) {
	t.Helper()
	hs := cudakernel.Headers()
	inc := make([]nvrtc.Include, len(hs))
	for i, h := range hs {
		inc[i] = nvrtc.Include{Source: h.Source, Name: h.Name}
	}
	prog, err := nvrtc.CreateProgram(source, file, inc...)
	if err != nil {
		t.Fatalf("nvrtc: %s: %v", file, err)
	}
	defer prog.Destroy()
	if err := prog.Compile(cudakernel.Options(major, minor, defines)...); err != nil {
		log, _ := prog.GetLog()
		t.Fatalf("nvrtc: %s %v: %v\n%s", file, defines, err, log)
	}
	ptx, err := prog.GetPTX()
	if err != nil {
		t.Fatalf("nvrtc: %s: PTX: %v", file, err)
	}
	path := filepath.Join(t.TempDir(), "kernel.ptx")
	if err := os.WriteFile(path, []byte(ptx), 0o644); err != nil {
		t.Fatal(err)
	}
	arch := fmt.Sprintf("sm_%d%d", major, minor)
	out, err := exec.Command(ptxas, "-arch="+arch, "-v", "-o", os.DevNull, path).CombinedOutput()
	if err != nil {
		t.Fatalf("ptxas -arch=%s %s (%s): %v\n%s", arch, file, shape, err, out)
	}
	res := parseResources(string(out))
	for _, e := range entries {
		r, ok := res[e]
		if !ok || r.registers == 0 {
			t.Errorf("%s %s: no entry %s in ptxas's report:\n%s", arch, shape, e, out)
			continue
		}
		t.Logf("%s %-15s %-44s %3d registers, %d B spill stores, %d B spill loads, %d B stack frame, %d B lmem",
			arch, e, shape, r.registers, r.spillStores, r.spillLoads, r.stack, r.lmem)
	}
	// Device functions ptxas kept out of line have a frame of their own.
	for f, r := range res {
		if r.local() {
			t.Errorf("%s %s: %s uses local memory: %+v", arch, shape, f, r)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
