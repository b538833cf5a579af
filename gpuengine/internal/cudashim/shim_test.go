package cudashim

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The shim compiles gorgonia's CUDA-12-style calls against CUDA 13 declarations and
// routes them to the new entry points with equivalent arguments; against CUDA 12 it
// changes nothing. The stand-in headers carry the signatures of each version.
func TestShimBridgesCUDA13(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	for _, c := range []struct {
		version string
		want    []string
	}{
		{"cuda13", []string{
			"cuCtxCreate_v4 params=null flags=4 dev=0",
			"cuMemAdvise_v2 ptr=16 n=32 advice=1 device 3",
			"cuMemAdvise_v2 ptr=16 n=32 advice=1 host 0",
			"cuMemPrefetchAsync_v2 ptr=16 n=32 device 2 flags=0",
			"cuMemPrefetchAsync_v2 ptr=16 n=32 host 0 flags=0",
			"cuGraphAddDependencies_v2 edges=null n=1",
			"cuGraphGetEdges_v2 edges=null n=1",
		}},
		{"cuda12", []string{
			"cuCtxCreate_v2 flags=4 dev=0",
			"cuMemAdvise ptr=16 n=32 advice=1 dev=3",
			"cuMemAdvise ptr=16 n=32 advice=1 dev=-1",
			"cuMemPrefetchAsync ptr=16 n=32 dev=2",
			"cuMemPrefetchAsync ptr=16 n=32 dev=-1",
			"cuGraphAddDependencies n=1",
			"cuGraphGetEdges n=1",
		}},
	} {
		bin := filepath.Join(t.TempDir(), "caller")
		// As with CGO_CFLAGS: the shim's directory first, the toolkit's include directory after it.
		args := []string{
			"-std=c11",
			"-Wall",
			"-Wextra",
			"-Werror",
			"-I.",
			"-I" + filepath.Join("testdata", c.version),
			"-o",
			bin,
			"testdata/caller.c",
			filepath.Join("testdata", c.version, "driver.c"),
		}
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: gcc %s: %v\n%s", c.version, strings.Join(args, " "), err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf(
				"%s calls:\n%s\nwant:\n%s",
				c.version,
				strings.Join(got, "\n"),
				strings.Join(c.want, "\n"),
			)
		}
	}
}
