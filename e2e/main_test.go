package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var (
	// repoRoot is the module root (the tests run in e2e/).
	repoRoot string
	// binDir holds whestbake and whestbake-worker built for this run.
	binDir string
	// skipWhy is set when the e2e tests cannot run here.
	skipWhy string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot = root
	switch {
	case testing.Short():
		skipWhy = "e2e tests start real servers and bakes; not run under -short"
	default:
		for _, b := range []string{"temporal", "minio"} {
			if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
				skipWhy = fmt.Sprintf("bin/%s is missing: "+
					"run `make tools` to build the pinned Temporal CLI and MinIO "+
					"(E2E_REQUIRED=1 makes this a failure)", b)
			}
		}
	}
	if skipWhy != "" {
		if os.Getenv("E2E_REQUIRED") == "1" && !testing.Short() {
			fmt.Fprintln(os.Stderr, "e2e: E2E_REQUIRED=1 but", skipWhy)
			return 1
		}
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "whestbake-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	for name, pkg := range map[string]string{
		"whestbake":        "./cmd/starter",
		"whestbake-worker": "./cmd/worker",
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building %s: %v\n%s", pkg, err, out)
			return 1
		}
	}
	binDir = dir
	return m.Run()
}

// requireE2E skips the test when the servers cannot run here.
func requireE2E(t *testing.T) {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
}
