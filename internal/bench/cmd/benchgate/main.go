// Command benchgate is the performance and memory regression gate
// (docs/benchmarks.md): `make bench-check` runs `benchgate check`,
// `make bench-baseline` runs `benchgate baseline`, `make bench-ci` runs
// `benchgate check --ci`, and bench/bisect.sh runs it at every commit it
// visits. `benchgate probe` is the child process that times one engine.
//
// Exit status: 0 the gate passes; 1 a metric regressed or went missing;
// 2 usage or setup error (no baseline, a build failed); 3 a workload could
// not measure (and nothing regressed).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bench/gate"
	"github.com/whestbake/whestbake/internal/bench/suite"
	"github.com/whestbake/whestbake/internal/hostinfo"
)

const (
	exitRegressed = 1
	exitSetup     = 2
	exitFailed    = 3
)

// ciSpeedMargin is the allowance of the numpy-ratio metrics when the run is
// on another machine than the baseline's, as CI's may be: another CPU has
// its own engine-to-numpy ratio (AVX2 against AVX-512 kernels, OpenBLAS's
// choice of kernels), so only a gross loss — a kernel falling back to
// portable Go, a copy in the hot loop — fails there.
const ciSpeedMargin = 0.35

// ciMemoryMargin is the allowance of the peak-RSS metrics in a CI run (see
// gate.Options.MemoryMargin): a collector running late under load moves a
// peak by a third; a row kept per MLP instead of streamed doubles it.
const ciMemoryMargin = 0.5

const usage = `usage:
  benchgate check    [--baseline FILE] [--only REGEXP] [--ref COMMIT] [--ci] [--margin F] [--speed-margin F] [--save FILE]
  benchgate baseline [--baseline FILE] [--only REGEXP]
  benchgate probe    --sampler philox|numpy --width W --depth D --n-samples N --threads T

Run from the module root. See docs/benchmarks.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitSetup
	}
	var err error
	code := 0
	switch args[0] {
	case "check":
		code, err = check(ctx, args[1:], stdout, stderr)
	case "baseline":
		code, err = baseline(ctx, args[1:], stdout, stderr)
	case "probe":
		err = probe(ctx, args[1:], stdout)
	default:
		err = fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	if err != nil {
		fmt.Fprintln(stderr, "benchgate:", err)
		return exitSetup
	}
	return code
}

// common are the flags of check and baseline.
type common struct {
	baseline, only, python string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.baseline, "baseline", "bench/baseline.json", "the baseline file")
	fs.StringVar(&c.only, "only", "", "measure only the metrics whose \"workload / metric\" matches this regular expression")
	fs.StringVar(&c.python, "python", "/usr/bin/python3", "interpreter of the numpy peer (Debian's python3-numpy: make bench-deps)")
}

// setup is what check and baseline share: the scratch directory, the
// selection and the suite's options.
func (c common) setup(stderr io.Writer) (suite.Options, func(), error) {
	if _, err := os.Stat("go.mod"); err != nil {
		return suite.Options{}, nil, errors.New("run from the module root (make bench-check)")
	}
	root, err := os.Getwd()
	if err != nil {
		return suite.Options{}, nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return suite.Options{}, nil, err
	}
	dir, err := os.MkdirTemp("", "whestbake-benchgate-")
	if err != nil {
		return suite.Options{}, nil, err
	}
	o := suite.Options{Root: root, Dir: dir, Python: c.python, Self: self, Log: stderr}
	if c.only != "" {
		re, err := regexp.Compile(c.only)
		if err != nil {
			os.RemoveAll(dir)
			return suite.Options{}, nil, fmt.Errorf("--only: %v", err)
		}
		o.Selected = func(m gate.Metric) bool { return re.MatchString(m.Key()) }
	}
	return o, func() { os.RemoveAll(dir) }, nil
}

func check(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var c common
	c.register(fs)
	ci := fs.Bool("ci", false, "CI's cheap part: no A/B build, 3 engine rounds, and the numpy ratios against a wide margin")
	ref := fs.String("ref", "", "commit whose build the A/B runs compare with (default: the last commit that changed the baseline file)")
	margin := fs.Float64("margin", gate.DefaultMargin, "allowed change for the worse beyond noise")
	save := fs.String("save", "", "also write this run's figures to this file, in the baseline's format")
	speedMargin := fs.Float64("speed-margin", 0, fmt.Sprintf("allowed change of the numpy ratios (default: --margin on the baseline's machine, %g on another or with --ci)", ciSpeedMargin))
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	base, err := gate.Load(c.baseline)
	if err != nil {
		return 0, err
	}
	o, cleanup, err := c.setup(stderr)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	o.EngineReps, o.Runs = 5, 1
	if *ci {
		o.EngineReps = 3
	}
	machine := machineLine(ctx, c.python)
	fmt.Fprintf(stdout, "machine:  %s\nbaseline: %s, commit %s, %s\n", machine, c.baseline, base.Commit, base.Date)
	if base.Machine != machine {
		fmt.Fprintf(stdout, "          measured on another machine: %s\n", base.Machine)
	}
	gopts := gate.Options{Margin: *margin, SpeedMargin: *speedMargin}
	if *speedMargin == 0 && (*ci || base.Machine != machine) {
		gopts.SpeedMargin = ciSpeedMargin
	}
	if *ci {
		gopts.MemoryMargin = ciMemoryMargin
	}
	o.AB = !*ci
	plan := suite.Plan(o)
	if len(plan) == 0 {
		return 0, fmt.Errorf("--only %q selects no metric", c.only)
	}
	if o.AB = slices.ContainsFunc(plan, func(m gate.Metric) bool { return m.InRun }); o.AB {
		if o.Ref, err = refBuild(ctx, o, c.baseline, *ref, stdout); err != nil {
			return 0, err
		}
	}
	fmt.Fprintln(stdout)
	start := time.Now()
	metrics := suite.Run(ctx, o)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if *save != "" {
		if err := gate.Save(*save, gate.Baseline{Machine: machine, Commit: "this tree", Date: time.Now().UTC().Format(time.DateOnly), Metrics: metrics}); err != nil {
			return 0, err
		}
	}
	planned := map[string]bool{}
	for _, m := range plan {
		planned[m.Key()] = true
	}
	gopts.Selected = func(m gate.Metric) bool { return planned[m.Key()] }
	rep := gate.Compare(base.Metrics, metrics, gopts)
	rep.Write(stdout)
	fmt.Fprintf(stdout, "\n%d metrics in %s; allowed = %.0f %% (numpy ratios %.0f %%) + noise, the larger spread of the baseline's and this run's repetitions around their median.\n",
		len(rep.Rows), time.Since(start).Round(time.Second), 100*gopts.Margin, 100*max(gopts.Margin, gopts.SpeedMargin))
	switch {
	case rep.Failed() && hasVerdict(rep, gate.Regressed, gate.Missing):
		fmt.Fprintln(stdout, "gate: FAIL (regression). An intended change: `make bench-baseline` and commit the baseline file with it.")
		return exitRegressed, nil
	case rep.Failed():
		fmt.Fprintln(stdout, "gate: FAIL (a workload could not measure)")
		return exitFailed, nil
	}
	fmt.Fprintln(stdout, "gate: ok")
	return 0, nil
}

func hasVerdict(r gate.Report, vs ...gate.Verdict) bool {
	for _, row := range r.Rows {
		for _, v := range vs {
			if row.Verdict == v {
				return true
			}
		}
	}
	return false
}

// refBuild builds the suite's program at the A/B reference commit: ref, or
// by default the last commit that changed the baseline file, so a commit
// that re-records the baseline also moves the reference to itself.
func refBuild(ctx context.Context, o suite.Options, baselineFile, ref string, stdout io.Writer) (string, error) {
	if ref == "" {
		var err error
		if ref, err = suite.Git(ctx, o.Root, "log", "-1", "--format=%H", "--", baselineFile); err != nil {
			return "", err
		}
		if ref == "" {
			return "", fmt.Errorf("%s has never been committed: commit it, or name the A/B reference with --ref", baselineFile)
		}
		if _, err := suite.Git(ctx, o.Root, "diff", "--quiet", "HEAD", "--", baselineFile); err != nil {
			fmt.Fprintf(stdout, "          %s has uncommitted changes; the A/B reference stays the last commit that changed it\n", baselineFile)
		}
	}
	commit, err := suite.Git(ctx, o.Root, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stdout, "A/B:      this tree against a build of %s\n", commit)
	fmt.Fprintf(o.Log, "building the A/B reference %s\n", commit)
	return suite.BuildRef(ctx, o.Root, commit, o.Dir)
}

func baseline(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	flags := flag.NewFlagSet("baseline", flag.ContinueOnError)
	var c common
	c.register(flags)
	if err := flags.Parse(args); err != nil {
		return 0, err
	}
	o, cleanup, err := c.setup(stderr)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	// More repetitions than a check, since their spread is the noise every
	// later check is allowed; the A/B runs compare this build with itself
	// (A/A), which is exactly their noise.
	o.EngineReps, o.Runs, o.AB, o.Ref = 5, 3, true, o.Self
	metrics := suite.Run(ctx, o)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// A new file starts empty (bench/bisect.sh records one metric of its
	// good commit this way); an unreadable one is an error, not a reset.
	old, err := gate.Load(c.baseline)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	planned := map[string]bool{}
	for _, m := range suite.Plan(o) {
		planned[m.Key()] = true
	}
	rep := gate.Compare(old.Metrics, metrics, gate.Options{Selected: func(m gate.Metric) bool { return planned[m.Key()] }})
	rep.Write(stdout)
	if rep.Failed() && hasVerdict(rep, gate.Failed) {
		fmt.Fprintln(stdout, "\nbench-baseline: not written, a workload could not measure")
		return exitFailed, nil
	}
	b := gate.Baseline{Machine: machineLine(ctx, c.python), Date: time.Now().UTC().Format(time.DateOnly), Metrics: metrics}
	if c.only != "" {
		b.Metrics = gate.Merge(old.Metrics, metrics)
	}
	if b.Commit, err = suite.Git(ctx, o.Root, "rev-parse", "HEAD"); err != nil {
		return 0, err
	}
	if dirty, err := treeDirty(ctx, o.Root, c.baseline); err != nil {
		return 0, err
	} else if dirty {
		b.Commit += "+dirty"
	}
	if err := gate.Save(c.baseline, b); err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "\nwrote %s (%d metrics): commit it together with the change it accepts\n", c.baseline, len(b.Metrics))
	return 0, nil
}

// treeDirty reports whether tracked files other than the baseline file
// differ from HEAD: re-recording the baseline changes it, which says nothing
// about the code it measured.
func treeDirty(ctx context.Context, root, baselineFile string) (bool, error) {
	out, err := suite.Git(ctx, root, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return false, err
	}
	self := ""
	if abs, err := filepath.Abs(baselineFile); err == nil {
		if rel, err := filepath.Rel(root, abs); err == nil {
			self = filepath.ToSlash(rel)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		// Lines are "XY path"; Git trims the output, so the first loses its
		// leading blank.
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] != self {
			return true, nil
		}
	}
	return false, nil
}

// machineLine describes the host as far as speed ratios depend on it: CPU,
// cores, memory, the engines' forward kernel and the peer's numpy.
func machineLine(ctx context.Context, python string) string {
	mem := hostinfo.ProcField("/proc/meminfo", "MemTotal")
	if kb, err := strconv.ParseFloat(strings.TrimSuffix(mem, " kB"), 64); err == nil {
		mem = fmt.Sprintf("%.0f GiB", kb/(1<<20))
	}
	np := "numpy missing"
	if b, err := exec.CommandContext(ctx, python, "-c", "import numpy; print(numpy.__version__)").Output(); err == nil {
		np = "numpy " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s, %d CPUs, %s, %s/%s, forward kernel %s, %s", hostinfo.CPUBrand(), runtime.NumCPU(), mem,
		runtime.GOOS, runtime.GOARCH, gpuengine.CPU{}.Describe().Kernel, np)
}

func probe(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	sampler := fs.String("sampler", string(bakeapi.SamplerPhilox), "philox or numpy")
	w := fs.Int("width", 256, "width")
	d := fs.Int("depth", 8, "depth")
	n := fs.Int64("n-samples", 1<<16, "samples of the timed bake")
	threads := fs.Int("threads", 1, "engine threads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	spec := bakeapi.Spec{Width: *w, Depth: *d, NSamples: *n, Sampler: bakeapi.Sampler(*sampler)}
	if spec.Sampler == bakeapi.SamplerNumpy {
		spec.Dot = bakeapi.DotFMA // whestbench's fixtures' dot product, as `whestbake bench` times it
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	rep, err := suite.Probe(ctx, spec, *threads)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rep)
}
