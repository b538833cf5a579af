package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/gpuengine"
)

// The peers: whestbench's own bakes, run by the driver script PeerScript, so
// every ratio compares against what a whestbench user runs.
const (
	// PeerNumpy is whestbench's create_dataset, the CPU path of `whest dataset
	// bake`: numpy under flopscope, on the BLAS numpy ships.
	PeerNumpy = "numpy peer"
	// PeerTorch is whestbench's create_dataset_torch, the path of `whest
	// dataset bake --torch`.
	PeerTorch = "torch peer"
)

// Where the peers' pieces are, relative to the module root: the driver of
// both; the Python judge's interpreter, which `make pyjudge` installs and
// which runs the numpy peer; and the judge with PyTorch, which `make
// pyjudge-torch` installs and which runs both.
const (
	PeerScript  = "internal/bench/whestbench_peer.py"
	JudgePython = ".pyjudge/bin/python"
	TorchPython = ".pyjudge-torch/bin/python"
)

// What installs each peer's interpreter, said where it is missing.
const (
	NumpyPeerInstall = "make pyjudge installs the Python judge, whestbench 0.16.2 with it, " +
		"or give --python an interpreter with whestbench"
	TorchPeerInstall = "make pyjudge-torch installs the judge with PyTorch for the CPU, " +
		"or give --python an interpreter with whestbench and PyTorch " +
		"(a CUDA build for --torch-device cuda)"
)

// NeedPython fails, saying what installs it, unless python is an
// executable: the check a command makes before it measures anything.
func NeedPython(python, install string) error {
	if _, err := exec.LookPath(python); err != nil {
		return fmt.Errorf("no Python interpreter %s (%v): %s", python, err, install)
	}
	return nil
}

// NumpyPeer runs whestbench's create_dataset on one MLP of cfg with python.
func NumpyPeer(ctx context.Context, python, script string, cfg Config, threads int) Result {
	args := []string{script,
		"--backend", "numpy",
		"--width", strconv.Itoa(cfg.Width),
		"--depth", strconv.Itoa(cfg.Depth),
		"--n-samples", strconv.FormatInt(cfg.NSamples, 10),
		"--n-mlps", "1",
		"--threads", strconv.Itoa(threads),
	}
	return runPeer(ctx, PeerNumpy, gpuengine.DeviceCPU, python, args, cfg, NumpyPeerInstall)
}

// TorchOptions set how the torch peer runs, as `whest dataset bake --torch` would.
type TorchOptions struct {
	Device string // "cuda" or "cpu"
	// MLPs share the configuration's samples and run in whestbench's bmm
	// batches of up to 16, the way a bake of that many MLPs runs them.
	MLPs int
	// ChunkSize is rows per chunk; 0 takes whestbench's rule: on CUDA a
	// quarter of free GPU memory, on the CPU 65,536 rows.
	ChunkSize int64
	Threads   int // torch CPU threads; 0 leaves torch's default
}

// TorchPeer runs whestbench's create_dataset_torch with python: o.MLPs MLPs
// of ceil(cfg.NSamples/o.MLPs) samples each.
func TorchPeer(ctx context.Context, python, script string, cfg Config, o TorchOptions) Result {
	mlps := int64(max(1, o.MLPs))
	args := []string{script,
		"--backend", "torch",
		"--device", o.Device,
		"--width", strconv.Itoa(cfg.Width),
		"--depth", strconv.Itoa(cfg.Depth),
		"--n-samples", strconv.FormatInt((cfg.NSamples+mlps-1)/mlps, 10),
		"--n-mlps", strconv.FormatInt(mlps, 10),
		"--chunk-size", strconv.FormatInt(o.ChunkSize, 10),
		"--threads", strconv.Itoa(o.Threads),
	}
	return runPeer(ctx, PeerTorch, o.Device, python, args, cfg, TorchPeerInstall)
}

// peerReport is the JSON line the peer script prints last.
type peerReport struct {
	Impl       string    `json:"impl"`
	Width      int       `json:"width"`
	Depth      int       `json:"depth"`
	Samples    int64     `json:"samples"`
	Seconds    float64   `json:"seconds"`
	CPUSeconds float64   `json:"cpu_seconds"`
	Whestbench string    `json:"whestbench"`
	BLAS       *peerBLAS `json:"blas"`
}

// peerBLAS is what the peer found out about the BLAS its matrix products
// ran on, any field null where nothing told. whestbench_peer.py asks
// threadpoolctl for numpy's and takes torch's own word for torch's.
type peerBLAS struct {
	Name    *string `json:"name"`
	Version *string `json:"version"`
	Core    *string `json:"core"`
	Source  *string `json:"source"`
}

// String names the library, its version and the core, the kernel family it
// picked, and how the core was found: "OpenBLAS 0.3.21, core Cooperlake
// (threadpoolctl)".
func (b *peerBLAS) String() string {
	if b == nil || b.Name == nil {
		return "BLAS not reported"
	}
	s := *b.Name
	if s == "openblas" {
		s = "OpenBLAS"
	}
	if b.Version != nil {
		s += " " + *b.Version
	}
	if b.Core == nil {
		return s + ", core not reported"
	}
	s += ", core " + *b.Core
	if b.Source != nil {
		s += " (" + *b.Source + ")"
	}
	return s
}

// runPeer runs python with args, the script first, on device and reads the
// peer's JSON line into a Result for cfg's shape; install says what to
// install when it fails.
func runPeer(
	ctx context.Context,
	peer, device, python string,
	args []string,
	cfg Config,
	install string,
) Result {
	res := Result{
		Impl:   peer,
		Config: cfg,
		Device: device,
		Peer:   peer,
	}
	out, err := exec.CommandContext(ctx, python, args...).Output()
	if err != nil {
		// The script explains a failure in its last stderr line, and so
		// does Python's traceback.
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			lines := strings.Split(strings.TrimSpace(string(ee.Stderr)), "\n")
			if lines[len(lines)-1] != "" {
				err = fmt.Errorf("%v: %s", err, lines[len(lines)-1])
			}
		}
		res.Err = fmt.Errorf("%s (%s %s): %v; %s", peer, python, args[0], err, install)
		return res
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var rep peerReport
	err = json.Unmarshal(lines[len(lines)-1], &rep)
	if err != nil || rep.Seconds <= 0 || rep.Samples <= 0 {
		res.Err = fmt.Errorf("%s printed %q, want one JSON line with samples and seconds",
			peer, out)
		return res
	}
	if rep.Width != cfg.Width || rep.Depth != cfg.Depth {
		res.Err = fmt.Errorf("%s measured W=%d D=%d, asked for W=%d D=%d",
			peer, rep.Width, rep.Depth, cfg.Width, cfg.Depth)
		return res
	}
	res.Impl = rep.Impl
	res.Seconds = rep.Seconds
	res.CPUSeconds = rep.CPUSeconds
	res.Config.NSamples = rep.Samples
	res.RanOn = rep.BLAS.String()
	if rep.Whestbench != "" {
		res.RanOn = "whestbench " + rep.Whestbench + ", " + res.RanOn
	}
	return res
}
