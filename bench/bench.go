// Package bench measures the engines side by side with a numpy peer running
// whestbench's CPU loop, and prints the table docs/benchmarks.md records.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/seeds"
)

// Config is one network shape to measure.
type Config struct {
	Width, Depth int
	NSamples     int64
}

// ParseConfigs reads "256x8,64x4".
func ParseConfigs(s string, n int64) ([]Config, error) {
	var out []Config
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), "x")
		w, e1 := strconv.Atoi(a)
		d, e2 := strconv.Atoi(b)
		if !ok || e1 != nil || e2 != nil || w <= 0 || d <= 0 {
			return nil, fmt.Errorf("--configs: %q is not WIDTHxDEPTH (for example 256x8)", part)
		}
		out = append(out, Config{w, d, n})
	}
	return out, nil
}

// Result is one measured implementation on one configuration.
type Result struct {
	Impl    string
	Config  Config
	Seconds float64
	Err     error
}

// SamplesPerSecond is the throughput.
func (r Result) SamplesPerSecond() float64 { return float64(r.Config.NSamples) / r.Seconds }

// GFLOPS counts 2·W²·D floating-point operations per sample (the matmuls).
func (r Result) GFLOPS() float64 {
	c := r.Config
	return 2 * float64(c.Width) * float64(c.Width) * float64(c.Depth) * r.SamplesPerSecond() / 1e9
}

// Engine times one MLP of cfg on the CPU engine with the given spec fields.
func Engine(ctx context.Context, impl string, cfg Config, sampler gpuengine.Sampler, dot gpuengine.DotProduct, threads int) Result {
	return EngineOn(ctx, impl, gpuengine.CPU{}, cfg, sampler, dot, threads)
}

// EngineOn times one MLP of cfg on eng after a small untimed bake, which pays what
// an engine does once (a GPU's kernel compilation) outside the measurement.
func EngineOn(ctx context.Context, impl string, eng gpuengine.Engine, cfg Config, sampler gpuengine.Sampler, dot gpuengine.DotProduct, threads int) Result {
	st := seeds.DeriveV3(42)
	w, err := seeds.Weights(cfg.Width, cfg.Depth, st.Weight)
	if err != nil {
		return Result{Impl: impl, Config: cfg, Err: err}
	}
	job := gpuengine.Job{Weights: w, Sample: st.Sample}
	spec := gpuengine.Spec{Width: cfg.Width, Depth: cfg.Depth, NSamples: cfg.NSamples, Sampler: sampler, Dot: dot, Threads: threads}
	warm := spec
	warm.NSamples = min(spec.NSamples, 1024)
	if _, err := eng.BakeMLP(ctx, warm, job, nil, nil); err != nil {
		return Result{Impl: impl, Config: cfg, Err: err}
	}
	start := time.Now()
	_, err = eng.BakeMLP(ctx, spec, job, nil, nil)
	return Result{Impl: impl, Config: cfg, Seconds: time.Since(start).Seconds(), Err: err}
}

// Peer runs the numpy peer script (bench/numpy_peer.py) with python.
func Peer(ctx context.Context, python, script string, cfg Config, threads int) Result {
	cmd := exec.CommandContext(ctx, python, script, "--width", strconv.Itoa(cfg.Width), "--depth", strconv.Itoa(cfg.Depth),
		"--n-samples", strconv.FormatInt(cfg.NSamples, 10), "--n-mlps", "1", "--threads", strconv.Itoa(threads))
	res := Result{Impl: "numpy peer", Config: cfg}
	out, err := cmd.Output()
	if err != nil {
		res.Err = fmt.Errorf("numpy peer (%s %s): %v; install Debian's python3-numpy and libopenblas0-pthread (make bench-deps)", python, script, err)
		return res
	}
	var rep struct {
		Impl    string  `json:"impl"`
		Seconds float64 `json:"seconds"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil || rep.Seconds <= 0 {
		res.Err = fmt.Errorf("numpy peer printed %q, want one JSON line with seconds", out)
		return res
	}
	res.Impl, res.Seconds = rep.Impl, rep.Seconds
	return res
}

// Table prints results grouped by configuration, each with its ratio to the
// peer measured in the same run.
func Table(w io.Writer, results []Result, peerImpl string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "| configuration\t| implementation\t| samples/s\t| ms per 1e6 samples\t| GFLOP/s\t| vs numpy peer\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---:\t|---:\t|---:\t|---:\t|")
	peer := map[Config]float64{}
	for _, r := range results {
		if r.Err == nil && r.Impl == peerImpl {
			peer[r.Config] = r.SamplesPerSecond()
		}
	}
	for _, r := range results {
		cfg := fmt.Sprintf("W=%d D=%d N=%d", r.Config.Width, r.Config.Depth, r.Config.NSamples)
		if r.Err != nil {
			fmt.Fprintf(tw, "| %s\t| %s\t| error: %v\t|\t|\t|\t|\n", cfg, r.Impl, r.Err)
			continue
		}
		ratio := "-"
		if p, ok := peer[r.Config]; ok {
			ratio = fmt.Sprintf("%.2f×", r.SamplesPerSecond()/p)
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %.0f\t| %.0f\t| %.1f\t| %s\t|\n", cfg, r.Impl, r.SamplesPerSecond(),
			1e9/r.SamplesPerSecond(), r.GFLOPS(), ratio)
	}
	tw.Flush()
}
