package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/whestbake/whestbake/"

// rules are docs/ARCHITECTURE.md's import rules: a package may not depend,
// directly or through others, on anything whose import path contains one of
// its forbidden strings (stdlibOnly: on anything outside the standard library).
var rules = []struct {
	pkg, why   string
	stdlibOnly bool
	forbidden  []string
}{
	{
		pkg:        "bakeapi",
		why:        "the contract is standard library only, so anything may build on it",
		stdlibOnly: true,
	},
	{
		pkg: "workflows",
		why: "workflow code is replayed from history: it links no engine, storage or " +
			"parquet code",
		forbidden: []string{
			module + "gpuengine", module + "dataset", module + "internal/", module + "activities",
			"parquet-go", "minio-go", "gorgonia",
		},
	},
	{
		pkg: "gpuengine",
		why: "engines compute; they know nothing of Temporal, S3 or the file format",
		forbidden: []string{
			module + "dataset", module + "internal/store",
			module + "internal/mlps", module + "internal/rows", module + "internal/localbake",
			module + "internal/verify",
			"go.temporal.io", "parquet-go", "minio-go",
		},
	},
	{
		pkg: "dataset",
		why: "the format package reads and writes files; it computes and orchestrates nothing",
		forbidden: []string{
			module + "gpuengine", module + "internal/store",
			module + "internal/mlps", module + "internal/rows", module + "internal/localbake",
			module + "internal/verify",
			module + "internal/report", module + "activities",
			"go.temporal.io", "minio-go", "golang.org/x/image",
		},
	},
	{
		pkg: "internal/report",
		why: "the report reads a dataset directory and draws it; it bakes, stores and " +
			"orchestrates nothing",
		forbidden: []string{
			module + "gpuengine", module + "internal/store",
			module + "internal/mlps", module + "internal/rows", module + "internal/localbake",
			module + "internal/verify",
			module + "activities",
			"go.temporal.io", "minio-go",
		},
	},
	{
		pkg: "internal/compare",
		why: "compare reads two dataset directories; it bakes, stores, downloads and " +
			"orchestrates nothing",
		forbidden: []string{
			module + "gpuengine", module + "internal/store",
			module + "internal/mlps", module + "internal/rows", module + "internal/localbake",
			module + "internal/verify",
			module + "internal/hub", module + "activities",
			"go.temporal.io", "minio-go",
		},
	},
	{
		pkg: "activities",
		why: "activities are called by name; they never reach back into workflow code",
		forbidden: []string{
			module + "workflows", module + "internal/cli", module + "internal/worker",
		},
	},
	{
		pkg: "internal/settings",
		why: "configuration sits low in the graph: it converts into what others need, and " +
			"needs no activity or workflow code",
		forbidden: []string{
			module + "activities", module + "workflows",
			module + "internal/worker", module + "internal/cli",
		},
	},
	{
		pkg: "internal/preflight",
		why: "the step between a config and the work checks files and the host; it runs no work",
		forbidden: []string{
			module + "activities", module + "workflows",
			module + "internal/worker", module + "internal/cli",
		},
	},
	{
		pkg: "internal/temporalconn",
		why: "the connection has its own config, which settings converts into: it never " +
			"calls back up into settings",
		forbidden: []string{
			module + "internal/settings", module + "activities", module + "workflows",
		},
	},
	{
		pkg: "internal/bakeclient",
		why: "the bake client is the application under the command line: it knows no " +
			"command, and reaches the workers through Temporal only",
		forbidden: []string{
			module + "internal/cli", "github.com/spf13/cobra",
			module + "activities", module + "workflows", module + "internal/worker",
		},
	},
}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

func TestImportRules(t *testing.T) {
	for _, r := range rules {
		for _, dep := range deps(t, r.pkg) {
			if dep == module+r.pkg || (r.pkg == "workflows" && dep == module+"bakeapi") {
				continue
			}
			// Standard-library paths have no dot in their first element.
			if first, _, _ := strings.Cut(dep, "/"); r.stdlibOnly && strings.Contains(first, ".") {
				t.Errorf("%s depends on %s: %s", r.pkg, dep, r.why)
			}
			for _, f := range r.forbidden {
				if strings.Contains(dep, f) {
					t.Errorf("%s depends on %s: %s", r.pkg, dep, r.why)
				}
			}
		}
	}
}

// application are the packages the command line calls (import rule 11).
var application = []string{"internal/localbake", "internal/verify", "internal/release",
	"internal/hub", "internal/compare", "internal/report", "internal/devstack",
	"internal/settings/migrate", "gpuengine"}

// The application under the command line knows no command: the CLI turns
// flags into its inputs and its outputs into text, and decides which of
// its errors are usage errors.
func TestApplicationKnowsNoCommand(t *testing.T) {
	command := []string{
		module + "internal/cli",
		module + "internal/cmdline",
		"github.com/spf13/cobra",
	}
	for _, pkg := range application {
		for _, dep := range deps(t, pkg) {
			for _, c := range command {
				if dep == c || strings.HasPrefix(dep, c+"/") {
					t.Errorf("%s depends on %s: an application package knows no command", pkg, dep)
				}
			}
		}
	}
}
