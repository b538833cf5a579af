package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A re-recorded baseline does not make the tree dirty; any other tracked
// change does, and a baseline outside the tree (bench/bisect.sh's) is never
// the reason.
func TestTreeDirty(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", root}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
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
