package pyjudge

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// pins reads requirements.txt's name==version lines that apply to this
// interpreter's Python 3.11 (the lock also pins numpy and pandas for other
// Pythons, under markers).
func pins(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pin := regexp.MustCompile(`^([A-Za-z0-9_.-]+)==([^ ;\\]+)\s*(;.*)?`)
	want := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := pin.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		if marker := m[3]; strings.Contains(marker, "python_full_version < '3.11'") {
			continue
		}
		want[normalize(m[1])] = m[2]
	}
	return want
}

// normalize is PEP 503's name normalization.
func normalize(name string) string {
	return strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(name, "-"))
}

// The judge is the pinned one: every distribution installed is one the
// lock pins, at its version, and whestbench, datasets, pyarrow, numpy,
// flopscope and huggingface_hub are among them.
func TestInstalledIsTheLock(t *testing.T) {
	env := Need(t)
	want := pins(t)
	got := map[string]string{}
	out := env.PythonOK(t, Cmd{}, `
import importlib.metadata as md
for d in md.distributions():
    print(d.metadata["Name"], d.version)
`).Stdout
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, version, _ := strings.Cut(line, " ")
		got[normalize(name)] = version
	}
	for name, version := range got {
		if name == "pip" || name == "setuptools" {
			continue // the venv's own
		}
		if want[name] != version {
			t.Errorf("%s %s is installed; requirements.txt pins %q", name, version, want[name])
		}
	}
	for _, name := range []string{"whestbench", "datasets", "pyarrow", "numpy",
		"flopscope", "huggingface-hub", "faker", "threadpoolctl"} {
		if got[name] == "" || got[name] != want[name] {
			t.Errorf("%s: installed %q, pinned %q", name, got[name], want[name])
		}
	}
}
