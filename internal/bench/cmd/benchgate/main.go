// Command benchgate is the performance and memory regression gate of
// docs/benchmarks.md: `make bench-check` runs `benchgate check`,
// `make bench-baseline` runs `benchgate baseline`, `make bench-ci` runs
// `benchgate check --ci`, and bench/bisect.sh runs it at every commit it
// visits. `benchgate probe` is the child process that times one engine.
// `benchgate cpu`, run by `make bench-cpu`, measures what docs/benchmarks.md's CPU
// tables show on the machine at hand: clock, peak, kernel, twin by phase.
//
// Exit status: 0 the gate passes; 1 a metric regressed or went missing;
// 2 usage or setup error, such as no baseline or a failed build; 3 a
// workload could not measure and nothing regressed.
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
	"github.com/whestbake/whestbake/internal/bench"
	"github.com/whestbake/whestbake/internal/bench/gate"
	"github.com/whestbake/whestbake/internal/bench/suite"
	"github.com/whestbake/whestbake/internal/hostinfo"
)

const (
	exitRegressed = 1
	exitSetup     = 2
	exitFailed    = 3
)

// ciSpeedMargin is the allowance of the numpy-ratio metrics in a CI run.
// They are gated only against the baseline of the machine's own class
// that gate.Class names, but a class is a CPU model, not a host: CI's 3 rounds run on
// whichever VM of that model it gets, with its own neighbours and clocks, so
// only a gross loss, such as a kernel falling back to portable Go or a copy
// in the hot loop, fails there. A developer's bench-check keeps --margin.
const ciSpeedMargin = 0.35

// ciMemoryMargin is the allowance of the peak-RSS metrics in a CI run,
// gate.Options.MemoryMargin, and in any run compared with another class's
// entry, gate.Options.OtherClassMemoryMargin: a collector running late under
// load moves a peak by a third; a row kept per MLP instead of streamed
// doubles it.
const ciMemoryMargin = 0.5

const usage = `usage:
  benchgate check    [--baseline FILE] [--only REGEXP] [--ref COMMIT] [--ci] [--margin F] ` +
	`[--speed-margin F] [--save FILE] [--demo-slowdown F]
  benchgate baseline [--baseline FILE] [--only REGEXP]
  benchgate probe    --sampler philox|numpy --width W --depth D --n-samples N --threads T
  benchgate cpu      [--rounds N] [--clock-runs N] [--pprof DIR] [--python P]

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
	case "cpu":
		err = cpuReport(ctx, args[1:], stdout, stderr)
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
	fs.StringVar(&c.only, "only", "",
		"measure only the metrics whose \"workload / metric\" matches this regular expression")
	fs.StringVar(&c.python, "python", bench.JudgePython,
		"interpreter of the numpy peer, whestbench's create_dataset: the Python judge (make pyjudge)")
}

// needPeer fails before anything runs when plan has a ratio to the numpy
// peer and the peer's interpreter is missing.
func (c common) needPeer(plan []gate.Metric) error {
	if !slices.ContainsFunc(plan, gate.Metric.DependsOnCPU) {
		return nil
	}
	return bench.NeedPython(c.python, bench.NumpyPeerInstall)
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
	o := suite.Options{
		Root:   root,
		Dir:    dir,
		Python: c.python,
		Self:   self,
		Log:    stderr,
	}
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
	ci := fs.Bool("ci", false,
		"CI's run: 3 engine rounds, the numpy ratios and peak memory against wide margins")
	ref := fs.String("ref", "", "commit whose build the A/B runs compare with "+
		"(default: the last commit that changed the baseline file)")
	margin := fs.Float64("margin", gate.DefaultMargin, "allowed change for the worse beyond noise")
	save := fs.String("save", "",
		"also write this run's figures to this file, as the one entry of a baseline file")
	speedMargin := fs.Float64("speed-margin", 0, fmt.Sprintf("allowed change of the numpy ratios, "+
		"which are gated against this machine class's entry only (default: --margin, %g with --ci)",
		ciSpeedMargin))
	slowDown := fs.Float64("demo-slowdown", 0, "test only: this tree's engine probes burn "+
		"this fraction of their CPU time again (0.3: 30 % more), "+
		"to show the gate failing a slowed build")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	file, err := gate.Load(c.baseline)
	if err != nil {
		return 0, err
	}
	o, cleanup, err := c.setup(stderr)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	o.EngineReps = 5
	o.Runs = 1
	o.SlowDown = *slowDown
	if *ci {
		o.EngineReps = 3
	}
	machine := machineLine(ctx, c.python)
	class := hostClass()
	refs := file.Refs(class)
	fmt.Fprintf(stdout, "machine:  %s\nclass:    %s\nbaseline: %s, %d %s\n", machine, class,
		c.baseline, len(file.Baselines), plural(len(file.Baselines), "entry", "entries"))
	if refs.Same != nil {
		fmt.Fprintf(stdout, "          ratios to the numpy peer: "+
			"against this class's entry (commit %s, %s)\n", refs.Same.Commit, refs.Same.Date)
	} else {
		fmt.Fprintf(stdout, "          ratios to the numpy peer: "+
			"recorded, not gated: no baseline for %s\n", class)
	}
	if len(refs.Order) > 0 {
		first := refs.Order[0]
		whose := "the entry of " + first.Class.String()
		if first == refs.Same {
			whose = "this class's entry"
		}
		newest := "the newest entry of kernel " + class.Kernel
		if first.Class.Kernel != class.Kernel {
			newest = "the newest entry (none has kernel " + class.Kernel + ")"
		}
		fmt.Fprintf(stdout, "          other rows: against %s (commit %s, %s), %s\n",
			whose, first.Commit, first.Date, newest)
	}
	gopts := gate.Options{
		Margin:                 *margin,
		SpeedMargin:            *speedMargin,
		OtherClassMemoryMargin: ciMemoryMargin,
	}
	if *speedMargin == 0 && *ci {
		gopts.SpeedMargin = ciSpeedMargin
	}
	if *ci {
		gopts.MemoryMargin = ciMemoryMargin
	}
	// The A/B ratio runs everywhere, CI included: both builds run on the
	// machine at hand, so it gates speed on a class without an entry too.
	o.AB = true
	plan := suite.Plan(o)
	if len(plan) == 0 {
		return 0, fmt.Errorf("--only %q selects no metric", c.only)
	}
	if err := c.needPeer(plan); err != nil {
		return 0, err
	}
	gatesAny := slices.ContainsFunc(plan, func(m gate.Metric) bool { return !m.DependsOnCPU() })
	if refs.Same == nil && !gatesAny {
		return 0, fmt.Errorf("--only %q selects only ratios to the numpy peer, "+
			"and %s has no entry for %s: "+
			"nothing would be gated (record one with benchgate baseline)",
			c.only, c.baseline, class)
	}
	var abErr error
	if o.AB = slices.ContainsFunc(plan, func(m gate.Metric) bool { return m.InRun }); o.AB {
		if o.Ref, abErr = refBuild(ctx, o, c.baseline, *ref, stdout); abErr != nil {
			// Everything else is still measured; the A/B rows fail with
			// the reason, so a build that was not raced never passes.
			fmt.Fprintf(stdout, "A/B:      FAILED: %v\n", abErr)
			o.AB = false
		}
	}
	if *slowDown > 0 {
		fmt.Fprintf(stdout, "demo:     this tree's engine probes burn %.0f %% more CPU time "+
			"(--demo-slowdown)\n", 100**slowDown)
	}
	fmt.Fprintln(stdout)
	start := time.Now()
	metrics := suite.Run(ctx, o)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if abErr != nil {
		for _, m := range plan {
			if m.InRun {
				m.Err = "the A/B reference could not be built: " + abErr.Error()
				metrics = append(metrics, m)
			}
		}
	}
	if *save != "" {
		run := gate.File{Baselines: []gate.Baseline{{
			Class:   class,
			Machine: machine,
			Commit:  "this tree",
			Date:    now(),
			Metrics: metrics,
		}}}
		if err := gate.Save(*save, run); err != nil {
			return 0, err
		}
	}
	planned := map[string]bool{}
	for _, m := range plan {
		planned[m.Key()] = true
	}
	gopts.Selected = func(m gate.Metric) bool { return planned[m.Key()] }
	rep := refs.Compare(metrics, gopts)
	rep.Write(stdout)
	numpy := fmt.Sprintf("numpy ratios %.0f %%", 100*max(gopts.Margin, gopts.SpeedMargin))
	if refs.Same == nil {
		numpy = "numpy ratios not gated"
	}
	memory := ""
	if gopts.MemoryMargin > 0 {
		memory = fmt.Sprintf(", peak RSS %.0f %%", 100*gopts.MemoryMargin)
	} else if refs.Same == nil || (len(refs.Order) > 0 && refs.Order[0] != refs.Same) {
		memory = fmt.Sprintf(", peak RSS against another class %.0f %%", 100*ciMemoryMargin)
	}
	fmt.Fprintf(stdout, "\n%d metrics in %s; allowed = %.0f %% (%s%s) + noise, "+
		"the larger spread of the baseline's and this run's repetitions around their median.\n",
		len(rep.Rows), time.Since(start).Round(time.Second), 100*gopts.Margin, numpy, memory)
	summary := fmt.Sprintf("%s; %d gated", class, len(rep.Rows)-countVerdict(rep, gate.NotGated))
	if n := countVerdict(rep, gate.NotGated); n > 0 {
		summary += fmt.Sprintf(", %d recorded, not gated", n)
	}
	switch {
	case rep.Failed() && hasVerdict(rep, gate.Regressed, gate.Missing):
		fmt.Fprintf(stdout, "gate: FAIL (regression; %s). An intended change: "+
			"`make bench-baseline` and commit the baseline file with it.\n", summary)
		return exitRegressed, nil
	case rep.Failed():
		fmt.Fprintf(stdout, "gate: FAIL (a workload could not measure; %s)\n", summary)
		return exitFailed, nil
	}
	fmt.Fprintf(stdout, "gate: ok (%s)\n", summary)
	return 0, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func countVerdict(r gate.Report, v gate.Verdict) int {
	n := 0
	for _, row := range r.Rows {
		if row.Verdict == v {
			n++
		}
	}
	return n
}

// now is the time an entry is recorded, as gate.Baseline.Date keeps it.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

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
// that re-records the baseline also moves the reference to itself. It fails,
// saying how to fix it, where that commit cannot be had: no Git history,
// as in a source tarball; a shallow clone whose history stops before the
// baseline's last change, where the boundary commit would look like that
// change; a ref this clone lacks; or a commit that does not build the suite.
func refBuild(
	ctx context.Context,
	o suite.Options,
	baselineFile, ref string,
	stdout io.Writer,
) (string, error) {
	commit, err := refCommit(ctx, o.Root, baselineFile, ref, stdout)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stdout, "A/B:      this tree against a build of %s\n", commit)
	fmt.Fprintf(o.Log, "building the A/B reference %s\n", commit)
	return suite.BuildRef(ctx, o.Root, commit, o.Dir)
}

// refCommit resolves refBuild's reference commit in the repository at root.
func refCommit(
	ctx context.Context,
	root, baselineFile, ref string,
	stdout io.Writer,
) (string, error) {
	const fix = "fetch the history (git fetch --unshallow, or a clone without --depth) " +
		"or name the reference (--ref COMMIT; make bench-ci REF=COMMIT)"
	if ref == "" {
		var err error
		ref, err = suite.Git(ctx, root, "log", "-1", "--format=%H", "--", baselineFile)
		if err != nil {
			return "", fmt.Errorf("%v: the last commit that changed %s is the reference, "+
				"and it takes the Git history; %s", err, baselineFile, fix)
		}
		if ref == "" {
			return "", fmt.Errorf("%s has never been committed: "+
				"commit it, or name the A/B reference with --ref", baselineFile)
		}
		if cut, err := shallowBoundary(ctx, root, ref); err != nil {
			return "", err
		} else if cut {
			return "", fmt.Errorf("this clone is shallow and its history stops at %s, "+
				"so the last commit that changed %s is not known; %s", ref, baselineFile, fix)
		}
		_, err = suite.Git(ctx, root, "diff", "--quiet", "HEAD", "--", baselineFile)
		if err != nil {
			fmt.Fprintf(stdout, "          %s has uncommitted changes; "+
				"the A/B reference stays the last commit that changed it\n", baselineFile)
		}
	}
	commit, err := suite.Git(ctx, root,
		"rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("the reference %s is not a commit of this clone (%v); %s",
			ref, err, fix)
	}
	return commit, nil
}

// shallowBoundary reports whether commit is where a shallow clone's history
// is cut off: Git shows such a commit as adding every file it has.
func shallowBoundary(ctx context.Context, root, commit string) (bool, error) {
	out, err := suite.Git(ctx, root, "rev-parse", "--is-shallow-repository")
	if err != nil || out != "true" {
		return false, err
	}
	path, err := suite.Git(ctx, root, "rev-parse", "--git-path", "shallow")
	if err != nil {
		return false, err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("a shallow clone without its list of cut-off commits: %w", err)
	}
	return slices.Contains(strings.Fields(string(b)), commit), nil
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
	// later check is allowed; the A/B runs compare this build with itself,
	// A/A, which is exactly their noise.
	o.EngineReps = 5
	o.Runs = 3
	o.AB = true
	o.Ref = o.Self
	if err := c.needPeer(suite.Plan(o)); err != nil {
		return 0, err
	}
	metrics := suite.Run(ctx, o)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// A new file starts empty, as when bench/bisect.sh records one metric of
	// its good commit; an unreadable one is an error, not a reset.
	file, err := gate.Load(c.baseline)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	class := hostClass()
	refs := file.Refs(class)
	planned := map[string]bool{}
	for _, m := range suite.Plan(o) {
		planned[m.Key()] = true
	}
	rep := refs.Compare(metrics, gate.Options{
		Selected:               func(m gate.Metric) bool { return planned[m.Key()] },
		OtherClassMemoryMargin: ciMemoryMargin,
	})
	rep.Write(stdout)
	if rep.Failed() && hasVerdict(rep, gate.Failed) {
		fmt.Fprintln(stdout, "\nbench-baseline: not written, a workload could not measure")
		return exitFailed, nil
	}
	b := gate.Baseline{
		Class:   class,
		Machine: machineLine(ctx, c.python),
		Date:    now(),
		Metrics: metrics,
	}
	if c.only != "" {
		var old []gate.Metric
		if refs.Same != nil {
			old = refs.Same.Metrics
		}
		b.Metrics = gate.Merge(old, metrics)
	}
	if b.Commit, err = suite.Git(ctx, o.Root, "rev-parse", "HEAD"); err != nil {
		return 0, err
	}
	if dirty, err := treeDirty(ctx, o.Root, c.baseline); err != nil {
		return 0, err
	} else if dirty {
		b.Commit += "+dirty"
	}
	replaced := refs.Same != nil
	file.Put(b)
	if err := gate.Save(c.baseline, file); err != nil {
		return 0, err
	}
	what := "added the entry of"
	if replaced {
		what = "replaced the entry of"
	}
	others := len(file.Baselines) - 1
	fmt.Fprintf(stdout, "\nwrote %s: %s %s (%d metrics); its %d other %s unchanged. "+
		"Commit it together with the change it accepts.\n",
		c.baseline, what, class, len(b.Metrics), others, plural(others, "entry is", "entries are"))
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

// hostClass is the machine class of this host: its CPU, the forward kernel
// the engines chose, the CPU's best or WHESTBAKE_CPU_KERNEL's cap, which
// the suite's children inherit, and the CPUs this process may use.
func hostClass() gate.Class {
	cpu := hostinfo.ReadCPU()
	return gate.Class{
		Vendor:    cpu.Vendor,
		Family:    cpu.Family,
		Model:     cpu.Model,
		ModelName: cpu.ModelName,
		Kernel:    gpuengine.CPU{}.Describe().Kernel,
		CPUs:      runtime.NumCPU(),
	}
}

// peerVersions prints what the numpy peer runs: whestbench's and numpy's
// versions and the core numpy's OpenBLAS chose, told by threadpoolctl, without
// importing whestbench, which takes seconds.
const peerVersions = `from importlib.metadata import version
import numpy, threadpoolctl
core = [l.get("architecture") for l in threadpoolctl.threadpool_info() if l.get("user_api") == "blas"]
print(f"whestbench {version('whestbench')}, numpy {numpy.__version__}" +
      (f" (OpenBLAS core {core[0]})" if core and core[0] else ""))`

// machineLine describes the host as far as speed ratios depend on it: CPU,
// cores, memory, the engines' forward kernel and what the numpy peer runs.
func machineLine(ctx context.Context, python string) string {
	mem := hostinfo.ProcField("/proc/meminfo", "MemTotal")
	if kb, err := strconv.ParseFloat(strings.TrimSuffix(mem, " kB"), 64); err == nil {
		mem = fmt.Sprintf("%.0f GiB", kb/(1<<20))
	}
	peer := "whestbench missing"
	if b, err := exec.CommandContext(ctx, python, "-c", peerVersions).Output(); err == nil {
		peer = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s, %d CPUs, %s, %s/%s, forward kernel %s, %s",
		hostinfo.CPUBrand(), runtime.NumCPU(), mem,
		runtime.GOOS, runtime.GOARCH, gpuengine.CPU{}.Describe().Kernel, peer)
}

func probe(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	sampler := fs.String("sampler", string(bakeapi.SamplerPhilox), "philox or numpy")
	w := fs.Int("width", 256, "width")
	d := fs.Int("depth", 8, "depth")
	n := fs.Int64("n-samples", 1<<16, "samples of the timed bake")
	threads := fs.Int("threads", 1, "engine threads")
	slowDown := fs.Float64("slow-down", 0,
		"test only: burn this fraction of the timed bake's CPU time again (check --demo-slowdown)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	spec := bakeapi.Spec{
		Width:    *w,
		Depth:    *d,
		NSamples: *n,
		Sampler:  bakeapi.Sampler(*sampler),
	}
	if spec.Sampler == bakeapi.SamplerNumpy {
		// whestbench's fixtures' dot product, as `whestbake bench` times it
		spec.Dot = bakeapi.DotFMA
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	rep, err := suite.Probe(ctx, spec, suite.ProbeOptions{Threads: *threads, SlowDown: *slowDown})
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rep)
}
