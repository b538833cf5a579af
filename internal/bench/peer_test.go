package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePeer writes a shell script standing in for a peer script: it records its
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
// samples it timed; the row takes its impl, device and that count.
func TestTorchPeerArgumentsAndReport(t *testing.T) {
	script, args := fakePeer(t, `echo "warming up"
echo '{"impl": "torch-cuda", "device": "cuda", "width": 256, "depth": 8, `+
		`"samples": 1002, "seconds": 0.5, "tflops": 0.001}'`)
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
	want := "--width 256 --depth 8 --n-samples 334 --n-mlps 3 " +
		"--device cuda --chunk-size 4096 --threads 2"
	if got := readArgs(t, args); got != want {
		t.Errorf("arguments %q, want %q", got, want)
	}
	if r.Impl != "torch-cuda" || r.Peer != PeerTorch || r.Device != "cuda" ||
		r.Config.NSamples != 1002 || r.Seconds != 0.5 {
		t.Errorf("result %+v", r)
	}
}

func TestNumpyPeerArguments(t *testing.T) {
	script, args := fakePeer(t, `echo '{"impl": "numpy-openblas", "width": 64, "depth": 4, `+
		`"samples": 5000, "seconds": 2.0, "cpu_seconds": 3.5, "threads": 2, `+
		`"blas": {"name": "openblas", "version": "0.3.21", "core": "Cooperlake", `+
		`"source": "OPENBLAS_VERBOSE=2"}}'`)
	r := NumpyPeer(context.Background(), "/bin/sh", script,
		Config{Width: 64, Depth: 4, NSamples: 5000}, 2)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := "--width 64 --depth 4 --n-samples 5000 --n-mlps 1 --threads 2"
	if got := readArgs(t, args); got != want {
		t.Errorf("arguments %q, want %q", got, want)
	}
	if r.Impl != "numpy-openblas" || r.Peer != PeerNumpy || r.Device != "cpu" ||
		r.SamplesPerSecond() != 2500 || r.CPUSeconds != 3.5 ||
		r.BLAS != "OpenBLAS 0.3.21, core Cooperlake (OPENBLAS_VERBOSE=2)" {
		t.Errorf("result %+v", r)
	}
}

// The peer's BLAS report says what it knows: a core no method found, or no
// report at all (an older peer script), is said to be unknown.
func TestPeerBLASSaysWhatIsKnown(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{
			`{"name": "openblas", "version": "0.3.26", "core": "Haswell", ` +
				`"source": "openblas_get_corename"}`,
			"OpenBLAS 0.3.26, core Haswell (openblas_get_corename)",
		},
		{
			`{"name": "openblas", "version": "0.3.21", "core": null, "source": null}`,
			"OpenBLAS 0.3.21, core not reported",
		},
		{
			`{"name": "mkl", "version": "2024.0", "core": "skylake", "source": "threadpoolctl"}`,
			"mkl 2024.0, core skylake (threadpoolctl)",
		},
		{`null`, "BLAS not reported"},
	} {
		script, _ := fakePeer(t, `echo '{"impl": "numpy-openblas", "width": 8, "depth": 1, `+
			`"samples": 10, "seconds": 1, "blas": `+c.json+`}'`)
		r := NumpyPeer(context.Background(), "/bin/sh", script,
			Config{Width: 8, Depth: 1, NSamples: 10}, 1)
		if r.Err != nil || r.BLAS != c.want {
			t.Errorf("blas %s: %q (%v), want %q", c.json, r.BLAS, r.Err, c.want)
		}
	}
}

// A failing peer's row carries the script's own one-line explanation and the hint.
func TestPeerFailuresAreExplained(t *testing.T) {
	cfg := Config{Width: 64, Depth: 4, NSamples: 1000}
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"exit", `echo "torch_peer: PyTorch is not importable" >&2; exit 2`,
			[]string{"exit status 2", "torch_peer: PyTorch is not importable", "--python"}},
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
