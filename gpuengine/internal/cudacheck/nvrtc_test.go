//go:build cuda

package cudacheck

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/gpuengine/internal/cudacompile"
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
// The tiling sweep's networks (sweep) compile every candidate of TilingCandidates, the
// others every plan of FusedPlans.
var networks = []struct {
	w, d  int
	sweep bool
}{
	// cudaShapes
	{256, 8, true}, {256, 2, false}, {64, 3, false}, {17, 2, false}, {8, 3, false},
	{100, 4, false}, {1, 1, false}, {512, 2, false}, {1000, 1, false},
	{64, 4, true},                 // the tiling sweep's second network
	{32, 4, false}, {8, 2, false}, // resume, divergence and refusals
	{100, 2, false}, // the host harness's bakeCases not above
}

// tilings are the host harness's other tilings of its 17×2 and 64×3 networks (fused
// shapes PlanFused never picks), compiled so the GPU could run what the harness checks.
var tilings = []struct{ w, d, ct, tm, rt, ks int }{
	{17, 2, 4, 32, 1, 4}, {17, 2, 8, 64, 4, 8}, {17, 2, 16, 32, 2, 16},
	{64, 3, 4, 32, 1, 4}, {64, 3, 8, 64, 4, 8}, {64, 3, 16, 32, 2, 16},
}

// Every kernel shape the tests use compiles with NVRTC exactly as the engine compiles
// it, mlp_tf32x3 where the network fits it, — a cubin for the device's sm_XY, assembled by NVRTC's own ptxas, whose -v report
// is in the program log — without spilling: a spill or any local memory would put the
// fused kernel's register fragment in DRAM-backed memory, far beyond its budget. The
// fused kernel's fallback tilings (cudakernel.FusedPlans) and the tiling sweep's
// candidates (cudakernel.TilingCandidates) are checked too, and so is the PTX the
// engine falls back to when a driver refuses the cubin.
func TestKernelsCompileWithoutSpills(t *testing.T) {
	major, minor, err := cudacompile.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %d.%d", major, minor)
	for _, a := range archs {
		seen := map[string]bool{}
		check := func(file, source, shape string, defines []string, entries ...string) {
			if key := strings.Join(defines, " "); !seen[file+key] {
				seen[file+key] = true
				compile(t, a.major, a.minor, file, source, shape, defines, entries)
			}
		}
		for _, n := range networks {
			plans, err := cudakernel.FusedPlans(n.w, n.d, a.maxShared)
			if err != nil {
				t.Fatal(err)
			}
			if n.sweep {
				plans = cudakernel.TilingCandidates(n.w, n.d, a.maxShared)
			}
			for _, s := range plans {
				check("fused.cu", cudakernel.FusedSource, s.String(), s.Defines(), "mlp_fused")
			}
			if tf32, err := cudakernel.TF32Plans(n.w, n.d, a.maxShared); err == nil {
				checkTF32(t, a.major, a.minor, tf32)
			}
			p := cudakernel.PlanPipeline(n.w, n.d, cudakernel.DefaultStep)
			check(
				"pipeline.cu",
				cudakernel.PipelineSource,
				fmt.Sprintf("pipeline W%d D%d", p.W, p.D),
				p.Defines(),
				"gen_inputs",
				"layer_reference",
				"relu_tilesum",
			)
		}
		for _, c := range tilings {
			wp := (c.w + c.ct - 1) / c.ct * c.ct
			s := cudakernel.FusedShape{
				W:  c.w,
				D:  c.d,
				WP: wp,
				TM: c.tm,
				RT: c.rt,
				CT: c.ct,
				KS: c.ks,
			}
			if err := s.Validate(a.maxShared); err != nil {
				t.Fatal(err)
			}
			check("fused.cu", cudakernel.FusedSource, s.String(), s.Defines(), "mlp_fused")
		}
	}
}

// checkTF32 compiles mlp_tf32x3's plans in order as the engine chooses among them
// (cudakernel.ChooseFused): one of them must use no local memory, and the log names it.
// Its bits do not depend on the plan, so a first plan that spills only costs speed.
func checkTF32(t *testing.T, major, minor int, plans []cudakernel.TF32Shape) {
	t.Helper()
	target := cudakernel.Target{Major: major, Minor: minor}
	for _, s := range plans {
		out, err := cudacompile.Compile("tf32x3.cu", cudakernel.TF32x3Source, headers(),
			cudakernel.Options(target, s.Defines()))
		if err != nil {
			t.Fatalf("%s (%s): %v", target.Arch(), s, err)
		}
		res := out.Report()
		if len(res.Local()) == 0 {
			t.Logf("%s %-15s %-44s %v", target.Arch(), "mlp_tf32x3", s, res["mlp_tf32x3"])
			return
		}
		t.Logf("%s %s spills, the engine takes the next plan: %v", target.Arch(), s, res["mlp_tf32x3"])
	}
	t.Errorf("%s: every mlp_tf32x3 plan spills: %v", target.Arch(), plans)
}

// headers are cudakernel.Headers for NVRTC.
func headers() []cudacompile.Header {
	hs := cudakernel.Headers()
	out := make([]cudacompile.Header, len(hs))
	for i, h := range hs {
		out[i] = cudacompile.Header{Name: h.Name, Source: h.Source}
	}
	return out
}

// compile builds one source as gpuengine's cudaDevice.compile does: a cubin for
// sm_<major><minor> whose ptxas report it logs per entry (failing on a spill or local
// memory), then the PTX fallback for compute_<major><minor>.
func compile(
	t *testing.T,
	major, minor int,
	file, source, shape string,
	defines, entries []string,
) {
	t.Helper()
	target := cudakernel.Target{Major: major, Minor: minor}
	out, err := cudacompile.Compile(file, source, headers(), cudakernel.Options(target, defines))
	if err != nil {
		t.Fatalf("%s (%s): %v", target.Arch(), shape, err)
	}
	if !out.Cubin || !bytes.HasPrefix(out.Image, []byte("\x7fELF")) {
		t.Fatalf(
			"%s (%s): NVRTC made no cubin (%d bytes, starting %q)",
			target.Arch(),
			shape,
			len(out.Image),
			out.Image[:min(8, len(out.Image))],
		)
	}
	res := out.Report()
	for _, e := range entries {
		r, ok := res[e]
		if !ok || r.Registers == 0 {
			t.Errorf("%s %s: no entry %s in ptxas's report:\n%s", target.Arch(), shape, e, out.Log)
			continue
		}
		t.Logf("%s %-15s %-44s %v", target.Arch(), e, shape, r)
	}
	// Device functions ptxas kept out of line have a frame of their own.
	for _, f := range res.Local() {
		t.Errorf("%s %s: %s uses local memory: %v", target.Arch(), shape, f, res[f])
	}
	target.PTX = true
	ptx, err := cudacompile.Compile(file, source, headers(), cudakernel.Options(target, defines))
	if err != nil {
		t.Fatalf("%s (%s): %v", target.Arch(), shape, err)
	}
	if ptx.Cubin || !bytes.Contains(ptx.Image, []byte(".entry "+entries[0])) {
		t.Errorf("%s (%s): the PTX fallback lacks %s", target.Arch(), shape, entries[0])
	}
}
