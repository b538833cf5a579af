package suite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Packages of the programs the workloads run, relative to the module root.
const (
	starterPkg = "./cmd/starter"
	workerPkg  = "./cmd/worker"
	// GatePkg is this suite's own program; a build of it at the baseline
	// commit is the "B" of the A/B engine runs.
	GatePkg = "./internal/bench/cmd/benchgate"
)

// goBuild builds pkg of the module at root into out.
func goBuild(ctx context.Context, root, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, root, err, b)
	}
	return nil
}

// build builds pkg of the tree under test into the scratch directory once
// per run, and returns the program's path.
func (o Options) build(ctx context.Context, name, pkg string) (string, error) {
	out := filepath.Join(o.Dir, name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	o.logf("building %s", pkg)
	return out, goBuild(ctx, o.Root, pkg, out)
}

// BuildRef builds the suite's program as it was at commit ref of the
// repository at root, from a `git archive` of that commit, into
// dir/benchgate-ref: no worktree, no change to the repository.
func BuildRef(ctx context.Context, root, ref, dir string) (string, error) {
	src := filepath.Join(dir, "ref-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	const unpack = `git archive --format=tar "$1" | tar -x -C "$2"`
	archive := exec.CommandContext(ctx, "sh", "-c", unpack, "sh", ref, src)
	archive.Dir = root
	if b, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive %s: %v\n%s", ref, err, b)
	}
	if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(GatePkg))); err != nil {
		return "", fmt.Errorf("commit %s has no %s: "+
			"the A/B runs need a baseline commit that has the suite", ref, GatePkg)
	}
	out := filepath.Join(dir, "benchgate-ref")
	return out, goBuild(ctx, src, GatePkg, out)
}

// Git runs git in root and returns its trimmed output.
func Git(ctx context.Context, root string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("git %s: %v %s",
			strings.Join(args, " "), err, strings.TrimSpace(stderr))
	}
	return strings.TrimSpace(string(b)), nil
}
