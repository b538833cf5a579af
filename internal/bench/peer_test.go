package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/pyjudge"
)

// fakePeer writes a shell script standing in for the peer script: it records its
// arguments in a file and runs body. The peers are then run with /bin/sh as their
// "python", which tests the protocol without python.
func fakePeer(t *testing.T, body string) (script, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	script = filepath.Join(dir, "peer.sh")
	argsFile = filepath.Join(dir, "args")
	src := "printf '%s\\n' \"$@\" > '" + argsFile + "'\n" + body + "\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return script, argsFile
}

func readArgs(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// The torch peer splits the samples over its MLPs (rounding up) and reports the
// samples it timed; the row takes its impl, device, that count and what it ran.
func TestTorchPeerArgumentsAndReport(t *testing.T) {
	script, args := fakePeer(t, `echo "warming up"
echo '{"impl": "whestbench create_dataset_torch (cuda)", "device": "cuda", "width": 256, `+
		`"depth": 8, "samples": 1002, "seconds": 0.5, "cpu_seconds": 0.6, "whestbench": "0.16.2", `+
		`"blas": {"name": "cuBLAS", "version": "13.0", "core": "NVIDIA H200", "source": "torch.cuda"}}'`)
	r := TorchPeer(context.Background(), "/bin/sh", script,
		Config{Width: 256, Depth: 8, NSamples: 1000},
		TorchOptions{
			Device:    "cuda",
			MLPs:      3,
			ChunkSize: 4096,
			Threads:   2,
		})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := "--backend torch --device cuda --width 256 --depth 8 --n-samples 334 --n-mlps 3 " +
		"--chunk-size 4096 --threads 2"
	if got := readArgs(t, args); got != want {
		t.Errorf("arguments %q, want %q", got, want)
	}
	if r.Impl != "whestbench create_dataset_torch (cuda)" || r.Peer != PeerTorch ||
		r.Device != "cuda" || r.Config.NSamples != 1002 || r.Seconds != 0.5 ||
		r.CPUSeconds != 0.6 ||
		r.RanOn != "whestbench 0.16.2, cuBLAS 13.0, core NVIDIA H200 (torch.cuda)" {
		t.Errorf("result %+v", r)
	}
}

func TestNumpyPeerArguments(t *testing.T) {
	script, args := fakePeer(t, `echo '{"impl": "whestbench create_dataset (numpy)", `+
		`"width": 64, "depth": 4, "samples": 5000, "seconds": 2.0, "cpu_seconds": 3.5, `+
		`"whestbench": "0.16.2", "blas": {"name": "openblas", "version": "0.3.31.188.0", `+
		`"core": "SkylakeX", "source": "threadpoolctl"}}'`)
	r := NumpyPeer(context.Background(), "/bin/sh", script,
		Config{Width: 64, Depth: 4, NSamples: 5000}, 2)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := "--backend numpy --width 64 --depth 4 --n-samples 5000 --n-mlps 1 --threads 2"
	if got := readArgs(t, args); got != want {
		t.Errorf("arguments %q, want %q", got, want)
	}
	if r.Impl != "whestbench create_dataset (numpy)" || r.Peer != PeerNumpy ||
		r.Device != "cpu" || r.SamplesPerSecond() != 2500 || r.CPUSeconds != 3.5 ||
		r.RanOn != "whestbench 0.16.2, OpenBLAS 0.3.31.188.0, core SkylakeX (threadpoolctl)" {
		t.Errorf("result %+v", r)
	}
}

// The peer's BLAS report says what it knows: a core nothing found, or no
// report at all, is said to be unknown.
func TestPeerBLASSaysWhatIsKnown(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{
			`{"name": "openblas", "version": "0.3.26", "core": "Haswell", ` +
				`"source": "threadpoolctl"}`,
			"OpenBLAS 0.3.26, core Haswell (threadpoolctl)",
		},
		{
			`{"name": "openblas", "version": "0.3.21", "core": null, "source": null}`,
			"OpenBLAS 0.3.21, core not reported",
		},
		{
			`{"name": "mkl", "version": null, "core": "AVX512", "source": "torch.backends"}`,
			"mkl, core AVX512 (torch.backends)",
		},
		{`null`, "BLAS not reported"},
	} {
		script, _ := fakePeer(t, `echo '{"impl": "x", "width": 8, "depth": 1, `+
			`"samples": 10, "seconds": 1, "blas": `+c.json+`}'`)
		r := NumpyPeer(context.Background(), "/bin/sh", script,
			Config{Width: 8, Depth: 1, NSamples: 10}, 1)
		if r.Err != nil || r.RanOn != c.want {
			t.Errorf("blas %s: %q (%v), want %q", c.json, r.RanOn, r.Err, c.want)
		}
	}
}

// A failing peer's row carries the script's own one-line explanation and what
// installs the peer.
func TestPeerFailuresAreExplained(t *testing.T) {
	cfg := Config{Width: 64, Depth: 4, NSamples: 1000}
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"exit", `echo "whestbench_peer: python cannot import torch" >&2; exit 2`,
			[]string{"exit status 2", "whestbench_peer: python cannot import torch",
				"make pyjudge-torch", "--python"}},
		{"not json", `echo "hello"`, []string{`printed "hello\n"`, "JSON line"}},
		{"no time", `echo '{"impl": "x", "width": 64, "depth": 4, "samples": 1000, "seconds": 0}'`,
			[]string{"JSON line"}},
		{"wrong shape",
			`echo '{"impl": "x", "width": 32, "depth": 4, "samples": 1000, "seconds": 1}'`,
			[]string{"measured W=32 D=4, asked for W=64 D=4"}},
	} {
		script, _ := fakePeer(t, c.body)
		r := TorchPeer(context.Background(), "/bin/sh", script, cfg,
			TorchOptions{Device: "cuda", MLPs: 1})
		if r.Err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.Err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, r.Err, w)
			}
		}
		if r.Peer != PeerTorch || r.Device != "cuda" {
			t.Errorf("%s: failed row %+v lost its peer or device", c.name, r)
		}
	}
}

// A missing interpreter is caught before anything is measured, with what
// installs it.
func TestNeedPythonSaysWhatInstallsIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), ".pyjudge", "bin", "python")
	err := NeedPython(missing, NumpyPeerInstall)
	if err == nil || !strings.Contains(err.Error(), missing) ||
		!strings.Contains(err.Error(), "make pyjudge") {
		t.Errorf("NeedPython(%s) = %v, want an error naming it and make pyjudge", missing, err)
	}
	if err := NeedPython("/bin/sh", NumpyPeerInstall); err != nil {
		t.Errorf("NeedPython(/bin/sh) = %v", err)
	}
}

// The numpy peer runs whestbench's own create_dataset in the judge and
// reports the sampling it timed: the driver checks that it timed one call
// per MLP, inside the span whestbench records as the row's wall_time_s.
func TestNumpyPeerRunsWhestbenchsBake(t *testing.T) {
	env := pyjudge.Need(t)
	r := NumpyPeer(context.Background(), env.Python, "whestbench_peer.py",
		Config{Width: 8, Depth: 2, NSamples: 4096}, 1)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Impl != "whestbench create_dataset (numpy)" || r.Config.NSamples != 4096 ||
		r.Seconds <= 0 || r.CPUSeconds <= 0 ||
		!strings.HasPrefix(r.RanOn, "whestbench 0.16.2, OpenBLAS ") {
		t.Errorf("result %+v", r)
	}
}

// The torch peer runs whestbench's create_dataset_torch on the CPU, in the
// judge with PyTorch that make pyjudge-torch installs (not make test's).
func TestTorchPeerRunsWhestbenchsBakeOnTheCPU(t *testing.T) {
	python := filepath.Join("..", "..", TorchPython)
	if NeedPython(python, TorchPeerInstall) != nil {
		t.Skip("no " + TorchPython + ": make pyjudge-torch installs it")
	}
	r := TorchPeer(context.Background(), python, "whestbench_peer.py",
		Config{Width: 8, Depth: 2, NSamples: 4096},
		TorchOptions{Device: "cpu", MLPs: 2, ChunkSize: 1000, Threads: 1})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Impl != "whestbench create_dataset_torch (cpu)" || r.Config.NSamples != 4096 ||
		r.Seconds <= 0 || r.CPUSeconds <= 0 ||
		!strings.HasPrefix(r.RanOn, "whestbench 0.16.2, mkl, core ") {
		t.Errorf("result %+v", r)
	}
}
