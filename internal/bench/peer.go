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

// The peers: scripts that run whestbench's own sampling loop, so every ratio
// compares against what a whestbench user runs today.
const (
	// PeerNumpy is internal/bench/numpy_peer.py, the reference's CPU loop on numpy + OpenBLAS.
	PeerNumpy = "numpy peer"
	// PeerTorch is internal/bench/torch_peer.py, the reference's torch loop (bmm, clamp_min_).
	PeerTorch = "torch peer"
)

// NumpyPeer runs the numpy peer script on one MLP of cfg with python.
func NumpyPeer(ctx context.Context, python, script string, cfg Config, threads int) Result {
	args := []string{script,
		"--width", strconv.Itoa(cfg.Width),
		"--depth", strconv.Itoa(cfg.Depth),
		"--n-samples", strconv.FormatInt(cfg.NSamples, 10),
		"--n-mlps", "1",
		"--threads", strconv.Itoa(threads),
	}
	return runPeer(ctx, PeerNumpy, gpuengine.DeviceCPU, python, args, cfg,
		"install Debian's python3-numpy and libopenblas0-pthread (make bench-deps)")
}

// TorchOptions set how the torch peer runs, as whestbench's --torch bake would.
type TorchOptions struct {
	Device string // "cuda" or "cpu"
	// MLPs share the configuration's samples and run as one bmm batch (up to 16),
	// the way a whestbench bake of that many MLPs runs them.
	MLPs int
	// ChunkSize is rows per chunk; 0 takes whestbench's rule (a quarter of free GPU memory).
	ChunkSize int64
	Threads   int // torch CPU threads for Device "cpu"; 0 leaves torch's default
}

// TorchPeer runs the torch peer script with python: o.MLPs MLPs of
// ceil(cfg.NSamples/o.MLPs) samples each.
func TorchPeer(ctx context.Context, python, script string, cfg Config, o TorchOptions) Result {
	mlps := int64(max(1, o.MLPs))
	args := []string{script,
		"--width", strconv.Itoa(cfg.Width),
		"--depth", strconv.Itoa(cfg.Depth),
		"--n-samples", strconv.FormatInt((cfg.NSamples+mlps-1)/mlps, 10),
		"--n-mlps", strconv.FormatInt(mlps, 10),
		"--device", o.Device,
		"--chunk-size", strconv.FormatInt(o.ChunkSize, 10),
		"--threads", strconv.Itoa(o.Threads),
	}
	return runPeer(ctx, PeerTorch, o.Device, python, args, cfg,
		"give --python an interpreter with PyTorch (a CUDA build for --torch-device cuda)")
}

// peerReport is the JSON line both peer scripts print last.
type peerReport struct {
	Impl    string  `json:"impl"`
	Width   int     `json:"width"`
	Depth   int     `json:"depth"`
	Samples int64   `json:"samples"`
	Seconds float64 `json:"seconds"`
	// CPUSeconds is absent from peers that do not measure it (torch).
	CPUSeconds float64 `json:"cpu_seconds"`
	// BLAS is absent from the torch peer.
	BLAS *peerBLAS `json:"blas"`
}

// peerBLAS is what the numpy peer found out about the BLAS its matrix
// products run on (numpy_peer.py, import_numpy), any field null where no
// method told.
type peerBLAS struct {
	Name    *string `json:"name"`
	Version *string `json:"version"`
	Core    *string `json:"core"`
	Source  *string `json:"source"`
}

// String names the library, its version and the core (kernel family) it
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

// runPeer runs python with args (the script first) on device and reads the peer's
// JSON line into a Result for cfg's shape; hint says what to install when it fails.
func runPeer(
	ctx context.Context,
	peer, device, python string,
	args []string,
	cfg Config,
	hint string,
) Result {
	res := Result{
		Impl:   peer,
		Config: cfg,
		Device: device,
		Peer:   peer,
	}
	out, err := exec.CommandContext(ctx, python, args...).Output()
	if err != nil {
		// The scripts explain a failure in their last stderr line.
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			lines := strings.Split(strings.TrimSpace(string(ee.Stderr)), "\n")
			if lines[len(lines)-1] != "" {
				err = fmt.Errorf("%v: %s", err, lines[len(lines)-1])
			}
		}
		res.Err = fmt.Errorf("%s (%s %s): %v; %s", peer, python, args[0], err, hint)
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
	if peer == PeerNumpy {
		res.BLAS = rep.BLAS.String()
	}
	return res
}
