package cudakernel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/gpuengine/internal/cudakernel"
)

// The sources compiled as CUDA device code by clang (when installed; CI may skip): they
// must be valid CUDA C++, and the PTX must keep the arithmetic pinned — every float
// operation with an explicit .rn rounding (ptxas never contracts those), mlp_fused's
// inner body unrolled into 4·RT·CT fmas (times the unrolled steps), and no local
// memory (the fragment lives in registers). The RNG has fmas of its own: they are the
// fmas of the same kernel with one step of four k per slice, less that step's.
// testdata/clang/prelude.h stands in for NVRTC's built-ins.
func TestSourcesCompileAsCUDA(t *testing.T) {
	clang := ""
	for _, c := range []string{
		"clang",
		"clang-14",
		"clang-15",
		"clang-16",
		"clang-17",
		"clang-18",
		"clang-19",
	} {
		if p, err := exec.LookPath(c); err == nil {
			clang = p
			break
		}
	}
	if clang == "" {
		t.Skip("clang not found: the CUDA-syntax check of the sources is skipped")
	}
	shape, err := cudakernel.PlanFused(256, 8, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	oneStep := shape
	oneStep.KS, oneStep.KU = 4, 0
	ptx := func(file string, defines []string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out.ptx")
		args := append(
			[]string{
				"-x",
				"cuda",
				"--cuda-gpu-arch=sm_80",
				"--cuda-device-only",
				"-nocudainc",
				"-nocudalib",
				"-std=c++17",
				"-O3",
				"-ffp-contract=off",
				"-Wall",
				"-Werror",
				"-Wno-unknown-cuda-version",
				"-include",
				"testdata/clang/prelude.h",
				"-I.",
				"-S",
				"-o",
				out,
				file,
			},
			defines...)
		if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", clang, strings.Join(args, " "), err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rngFMAs := strings.Count(ptx("fused.cu", oneStep.Defines()), "fma.rn.f32") - 4*shape.RT*shape.CT
	tf32, err := cudakernel.PlanTF32(256, 8, h100Shared)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, entries string
		defines       []string
		fmas, steps   int
	}{
		{"fused.cu", "mlp_fused", shape.Defines(), 4 * shape.RT * shape.CT, max(1, shape.KU)},
		{"tf32x3.cu", "mlp_tf32x3", tf32.Defines(), 0, 0},
		{
			"pipeline.cu",
			"gen_inputs layer_reference relu_tilesum",
			cudakernel.PlanPipeline(17, 3, 1000).Defines(),
			0,
			0,
		},
	} {
		ptx := ptx(c.file, c.defines)
		for _, e := range strings.Fields(c.entries) {
			if !strings.Contains(ptx, ".entry "+e+"(") {
				t.Errorf("%s: no kernel %s in the PTX", c.file, e)
			}
		}
		unrounded := regexp.MustCompile(`\b(add|sub|mul|fma|mad|div|sqrt)\.f(32|64)\b`)
		if m := unrounded.FindString(ptx); m != "" {
			t.Errorf("%s: %s has no rounding suffix, so ptxas may contract it", c.file, m)
		}
		if strings.Contains(ptx, ".local") {
			t.Errorf("%s: uses local memory", c.file)
		}
		// The body of four k is unrolled whole; of the KU steps, clang may unroll
		// fewer than NVRTC does (any divisor of KU keeps the fragment in registers).
		if n := strings.Count(ptx, "fma.rn.f32") - rngFMAs; c.fmas > 0 &&
			(n%c.fmas != 0 || n == 0 || c.steps%(n/c.fmas) != 0) {
			t.Errorf(
				"%s: %d fma.rn.f32 besides the RNG's %d, want %d times a divisor of %d "+
					"(the unrolled body of four k)",
				c.file,
				n,
				rngFMAs,
				c.fmas,
				c.steps,
			)
		}
	}
}
