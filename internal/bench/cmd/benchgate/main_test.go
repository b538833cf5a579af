package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/bench/gate"
)

// gitRepo makes a repository in a temporary directory and returns its path
// and a function running git there.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		gitArgs := []string{
			"-c", "user.name=t",
			"-c", "user.email=t@t",
			"-c", "protocol.file.allow=always",
			"-C", root,
		}
		cmd := exec.Command("git", append(gitArgs, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	return root, git
}

func writeFile(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The A/B reference is the last commit that changed the baseline file. A
// shallow clone that still holds that commit (and one before it) finds it;
// one cut off later would see the cut-off commit as adding the file, so it
// is refused, and so is a named reference the clone lacks, each error saying
// how to fix it.
func TestRefCommitIsTheBaselinesLastChange(t *testing.T) {
	ctx := context.Background()
	root, git := gitRepo(t)
	commit := func(name, content string) string {
		writeFile(t, root, name, content)
		git("add", ".")
		git("commit", "-q", "-m", name)
		return git("rev-parse", "HEAD")
	}
	commit("code.go", "package w")
	commit("code.go", "package x")
	recorded := commit("bench/baseline.json", "{}")
	commit("code.go", "package y")
	commit("code.go", "package z")

	var out strings.Builder
	got, err := refCommit(ctx, root, "bench/baseline.json", "", &out)
	if err != nil || got != recorded {
		t.Fatalf("full clone: %q, %v; want %s", got, err, recorded)
	}
	clone := func(depth string) string {
		dir := filepath.Join(t.TempDir(), "clone")
		git("clone", "-q", "--depth", depth, "file://"+root, dir)
		return dir
	}
	got, err = refCommit(ctx, clone("4"), "bench/baseline.json", "", &out)
	if err != nil || got != recorded {
		t.Fatalf("clone of depth 4: %q, %v; want %s", got, err, recorded)
	}
	shallow := clone("1")
	_, err = refCommit(ctx, shallow, "bench/baseline.json", "", &out)
	if err == nil ||
		!strings.Contains(err.Error(), "shallow") ||
		!strings.Contains(err.Error(), "git fetch --unshallow") {
		t.Fatalf("clone of depth 1: %v; want the shallow clone named, with the fix", err)
	}
	_, err = refCommit(ctx, shallow, "bench/baseline.json", recorded, &out)
	if err == nil ||
		!strings.Contains(err.Error(), "not a commit of this clone") ||
		!strings.Contains(err.Error(), "--ref") {
		t.Fatalf("a reference the clone lacks: %v", err)
	}
	_, err = refCommit(ctx, t.TempDir(), "bench/baseline.json", "", &out)
	if err == nil || !strings.Contains(err.Error(), "Git history") {
		t.Fatalf("no repository: %v", err)
	}
}

// A re-recorded baseline does not make the tree dirty; any other tracked
// change does, and a baseline outside the tree (bench/bisect.sh's) is never
// the reason.
func TestTreeDirty(t *testing.T) {
	root, git := gitRepo(t)
	write := func(name, content string) { writeFile(t, root, name, content) }
	write("bench/baseline.json", "{}")
	write("code.go", "package x")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	t.Chdir(root)
	check := func(what, baseline string, want bool) {
		t.Helper()
		got, err := treeDirty(context.Background(), root, baseline)
		if err != nil || got != want {
			t.Errorf("%s: dirty %v, %v; want %v", what, got, err, want)
		}
	}
	check("clean tree", "bench/baseline.json", false)
	write("bench/baseline.json", `{"metrics": []}`)
	write("untracked.txt", "x")
	check("re-recorded baseline and an untracked file", "bench/baseline.json", false)
	check("baseline outside the tree", filepath.Join(t.TempDir(), "good.json"), true)
	write("code.go", "package y")
	check("changed code", "bench/baseline.json", true)
}

// The FP32 FMA lanes behind a share of peak follow the kernel the engines
// run and the vector units of the class: Zen 4 issues an AVX-512 FMA on two
// 256-bit pipes, a Xeon's AVX-512 is assumed to have two 512-bit units (and
// says so), any AVX2 core has two 256-bit units, and the portable kernel has
// no vector peak at all.
func TestFMALanesFollowTheClass(t *testing.T) {
	for _, c := range []struct {
		class   gate.Class
		lanes   int
		assumed bool
	}{
		{gate.Class{Vendor: "AuthenticAMD", Family: 25, Model: 17, Kernel: "avx512f"}, 16, false},
		{gate.Class{Vendor: "GenuineIntel", Family: 6, Model: 207, Kernel: "avx512f"}, 32, true},
		{gate.Class{Vendor: "GenuineIntel", Family: 6, Model: 207, Kernel: "avx2-fma"}, 16, false},
		{gate.Class{Vendor: "AuthenticAMD", Family: 25, Model: 17, Kernel: "generic"}, 0, false},
	} {
		lanes, why := fmaLanes(c.class)
		if lanes != c.lanes || strings.HasPrefix(why, "assumed") != c.assumed {
			t.Errorf("%s: %d lanes (%s), want %d, assumed %v",
				c.class, lanes, why, c.lanes, c.assumed)
		}
	}
}

func TestSpreadIsMedianAndRange(t *testing.T) {
	if got := spread([]float64{3, 1, 2}, "%.1f"); got != "2.0 (1.0–3.0)" {
		t.Errorf("spread = %q", got)
	}
	if got := spread([]float64{5}, "%.0f"); got != "5" {
		t.Errorf("spread of one = %q", got)
	}
}
