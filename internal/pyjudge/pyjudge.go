// Package pyjudge runs the Python programs that judge what whestbake
// writes and serves: whestbench's `whest` CLI and Python API, Hugging Face
// `datasets`, pyarrow and huggingface_hub, at the versions requirements.txt
// pins. `make pyjudge` installs them into .pyjudge/ at the module's root,
// and `make test` runs it first.
//
// The judges are not ours, so a test that runs them is a test against
// independent truth. Without the install a test skips, saying how to get
// it; PYJUDGE_REQUIRED=1, which CI sets, makes it fail instead.
package pyjudge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is an installed judge environment.
type Env struct {
	// Dir is the virtual environment's folder.
	Dir string
	// Python is its interpreter, Whest whestbench's command line.
	Python, Whest string
}

// Need returns the judge environment, or skips the test (fails it under
// PYJUDGE_REQUIRED=1) when it is not installed. WHESTBAKE_PYJUDGE names
// another folder than the module's .pyjudge.
func Need(t testing.TB) *Env {
	t.Helper()
	env, err := find()
	if err != nil {
		msg := err.Error() + "; install it with: make pyjudge (needs PyPI)"
		if os.Getenv("PYJUDGE_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return env
}

// find locates the environment and checks that `make pyjudge` finished
// installing it: the stamp is written last.
func find() (*Env, error) {
	dir := os.Getenv("WHESTBAKE_PYJUDGE")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(root, ".pyjudge")
	}
	e := &Env{
		Dir:    dir,
		Python: filepath.Join(dir, "bin", "python"),
		Whest:  filepath.Join(dir, "bin", "whest"),
	}
	if _, err := os.Stat(filepath.Join(dir, stampFile)); err != nil {
		return nil, fmt.Errorf("the Python judge is not installed in %s", dir)
	}
	return e, nil
}

// stampFile is what `make pyjudge` writes once the install is complete:
// the sha256 of the requirements it installed.
const stampFile = ".requirements.sha256"

// moduleRoot is the folder of go.mod above the working directory, which
// go test sets to the package's folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("pyjudge: no go.mod above the working directory")
		}
		dir = up
	}
}

// Cmd is one run of a judge: the program, its arguments, and what it is
// given beside them.
type Cmd struct {
	// Dir is the working directory; empty is the test's.
	Dir string
	// Env is added to the environment the judge gets (KEY=VALUE).
	Env []string
	// Stdin, if set, is the program's input.
	Stdin []byte
}

// Result is what a judge printed and how it ended.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// run runs name with args under c. The environment is this process's with
// the judge's folder first on PATH, Python's output unbuffered and in
// UTF-8, and no user site-packages, so the host's Python packages never
// stand in for the pinned ones.
func (e *Env) run(c Cmd, name string, args ...string) (Result, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(e.Dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PYTHONNOUSERSITE=1",
		"PYTHONUNBUFFERED=1",
		"PYTHONIOENCODING=utf-8",
		"HF_HUB_DISABLE_TELEMETRY=1",
		"HF_HUB_DISABLE_PROGRESS_BARS=1",
		"DO_NOT_TRACK=1",
	)
	cmd.Env = append(cmd.Env, c.Env...)
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
		return r, nil
	case err != nil:
		return r, err
	}
	return r, nil
}

// WhestOK runs `whest ARGS...` and returns what it printed, failing the
// test unless it exits 0.
func (e *Env) WhestOK(t testing.TB, c Cmd, args ...string) Result {
	t.Helper()
	return e.ok(t, c, e.Whest, args...)
}

// WhestRun runs `whest ARGS...` however it ends.
func (e *Env) WhestRun(t testing.TB, c Cmd, args ...string) Result {
	t.Helper()
	r, err := e.run(c, e.Whest, args...)
	if err != nil {
		t.Fatalf("whest %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// PythonOK runs the Python program code with args (sys.argv[1:]) and
// returns what it printed, failing the test unless it exits 0.
func (e *Env) PythonOK(t testing.TB, c Cmd, code string, args ...string) Result {
	t.Helper()
	return e.ok(t, c, e.Python, append([]string{"-c", code}, args...)...)
}

// PythonRun runs the Python program code with args however it ends.
func (e *Env) PythonRun(t testing.TB, c Cmd, code string, args ...string) Result {
	t.Helper()
	r, err := e.run(c, e.Python, append([]string{"-c", code}, args...)...)
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	return r
}

func (e *Env) ok(t testing.TB, c Cmd, name string, args ...string) Result {
	t.Helper()
	r, err := e.run(c, name, args...)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(name), err)
	}
	if r.Code != 0 {
		shown := args
		if len(shown) > 0 && shown[0] == "-c" {
			shown = shown[2:]
		}
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(name),
			strings.Join(shown, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}
