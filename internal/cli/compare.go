package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/compare"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/safetext"
)

// errDatasetsDiffer is compare's verdict "different": exit 1.
var errDatasetsDiffer = errors.New("the datasets differ")

// shownMLPs bounds the rows of the per-MLP table in text output. The JSON
// has every MLP.
const shownMLPs = 20

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use: "compare A B",
		Short: "Is dataset B the same ground truth as A? Split by split, MLP by MLP: " +
			"bit for bit (--mode exact) or within Monte Carlo error (--mode stat)",
		Long: `Compares two complete datasets split by split and MLP by MLP: directories,
or hf://OWNER/NAME[@REVISION] (its metadata.json, data/ and prepared/ downloaded
to a temporary directory first, checked as dataset download checks them, and
removed after); the MLPs must be the same (the same mlp_seed in the same
place) and of the same shape, else exit 2. Each dataset's prepared Arrow tree,
which whestbench's loader reads before the parquet files, must read as its
rows (as dataset inspect checks it), else exit 2.

--mode exact (the default when both were baked with the same sampler, algorithm
and n_samples): names, weights, all_layer_means and final_means bit-identical,
avg_variance within 1e-15 + 1e-12·max(|a|, |b|) (numpy.isclose's tolerance, made
symmetric); the first differences are shown.
--mode stat (the default otherwise, e.g. philox against numpy, or whestbench's
torch backend against its CPU one): names and weights bit-identical, and each
neuron's mean (all_layer_means and final_means) within Monte Carlo error:
z = Δmean/σ̂ with a conservative σ̂ that neither dataset can widen
(docs/WHESTBENCH.md); a neuron whose |z|, or a layer whose
‖z_l‖ = sqrt(Σ z²), is beyond the Bonferroni threshold for an overall
false-alarm rate --alpha counts as different; so does an avg_variance whose
own |z| is. Both modes give the same verdict for A B and B A.

Exit 0: the same (exact) or equivalent (stat); 1: different; 2: not compared
(bad input, a dataset that does not read, a failed download).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, args[0], args[1], f)
		},
		Annotations: map[string]string{verdictAnnotation: "different"},
	}
	f.register(cmd)
	return cmd
}

type compareFlags struct {
	mode      string
	alpha     float64
	asJSON    bool
	shown     int
	hubSource hubFlags
}

func (f *compareFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "mode", "",
		"exact, stat or tf32x3 (default: exact when sampler, algorithm and n_samples match; "+
			"tf32x3 when they differ in precision or tensor cores only; else stat)")
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha,
		"stat: overall false-alarm rate for two correct bakes")
	fl.IntVar(&f.shown, "show", 10, "how many differences to show")
	fl.BoolVar(&f.asJSON, "json", false,
		"print the result as JSON (every MLP's statistics included)")
	f.hubSource.register(cmd)
}

// compareModes are --mode's values; "" lets compare.Run choose.
var compareModes = map[string]compare.Mode{
	"":       "",
	"exact":  compare.ModeExact,
	"stat":   compare.ModeStat,
	"tf32x3": compare.ModeTF32x3,
}

func runCompare(cmd *cobra.Command, a, b string, f compareFlags) error {
	m, ok := compareModes[f.mode]
	if !ok {
		return cmdline.Usagef("--mode %q: use exact, stat or tf32x3", f.mode)
	}
	if f.alpha <= 0 || f.alpha > compare.MaxAlpha {
		return cmdline.Usagef("--alpha=%g: use a false-alarm rate in (0, %g]",
			f.alpha, compare.MaxAlpha)
	}
	dirs := make([]string, 2)
	for i, src := range []string{a, b} {
		dir, cleanup, err := compareSource(cmd, f.hubSource, src)
		if err != nil {
			return err
		}
		defer cleanup()
		dirs[i] = dir
	}
	res, err := compare.Run(compare.Input{
		A:     dirs[0],
		B:     dirs[1],
		Mode:  m,
		Alpha: f.alpha,
		Shown: f.shown,
	})
	if err != nil {
		return err
	}
	// The result names the sources as given, not the directories they were
	// downloaded to.
	res.A = a
	res.B = b
	out := cmd.OutOrStdout()
	if f.asJSON {
		if err := writeJSON(out, comparisonJSON{Schema: compareSchema, Result: res}); err != nil {
			return err
		}
	} else {
		printComparison(out, res)
	}
	if !res.Same {
		return errDatasetsDiffer
	}
	return nil
}

// comparisonJSON is whestbake.compare/v1: the comparison, named.
type comparisonJSON struct {
	Schema string `json:"schema"`
	*compare.Result
}

// compareSource is src as a directory to compare: itself, or for hf://
// what compare reads of the revision, downloaded into a temporary directory
// that cleanup removes. That is metadata.json, the splits' parquet files
// and the prepared tree that whestbench's loader reads before them; not
// the card or the report.
func compareSource(cmd *cobra.Command, h hubFlags, src string,
) (dir string, cleanup func(), err error) {
	repo, rev, ok, err := hub.ParseURI(src)
	if err != nil {
		return "", nil, cmdline.Usage(err)
	}
	if !ok {
		return src, func() {}, nil
	}
	c, err := h.reader()
	if err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp("", "whestbake-compare-*")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	dir = filepath.Join(tmp, "dataset")
	compared := func(p string) bool {
		return p == "metadata.json" || (path.Dir(p) == "data" && strings.HasSuffix(p, ".parquet")) ||
			strings.HasPrefix(p, dataset.PreparedDir+"/")
	}
	_, err = c.Download(cmd.Context(), hub.DownloadOptions{
		Repo:     repo,
		Revision: rev,
		Output:   dir,
		Keep:     compared,
	})
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s: %w", src, err)
	}
	return dir, cleanup, nil
}

func printComparison(w io.Writer, r *compare.Result) {
	fmt.Fprintf(w, "Comparing %s with %s: mode %s (%s)\n",
		safetext.Line(r.A), safetext.Line(r.B), r.Mode, safetext.Line(r.ModeReason))
	for _, s := range r.Splits {
		fmt.Fprintf(w, "split %s: %d MLPs, n_samples %d and %d: %d differ%s\n",
			safetext.Line(s.Name), s.MLPs, s.NSamplesA, s.NSamplesB, s.DifferentMLPs, preparedNote(s))
		if r.Mode == compare.ModeStat && len(s.MLPStats) > 0 {
			printMLPStats(w, s)
		}
	}
	if len(r.Differences) > 0 {
		fmt.Fprintln(w, "first differences:")
		for _, d := range r.Differences {
			at := ""
			if d.Index >= 0 {
				at = fmt.Sprintf("[%d]", d.Index)
			}
			fmt.Fprintf(w, "  split %s mlp_id %d (seed %d): %s%s: A %s, B %s\n",
				safetext.Line(d.Split), d.MLPID, d.Seed, d.Field, at, safetext.Line(d.A), safetext.Line(d.B))
		}
	}
	var verdict strings.Builder
	switch {
	case r.Same && r.Mode == compare.ModeExact:
		verdict.WriteString("✓ identical")
	case r.Same && r.Mode == compare.ModeTF32x3:
		fmt.Fprintf(&verdict, "✓ within tf32x3's tolerance: every mean within %g of its "+
			"layer's largest, avg_variance within %g of its own (twice that between two "+
			"tf32x3 bakes)", r.MeanTolerance, r.VarianceTolerance)
	case r.Same:
		fmt.Fprintf(&verdict, "✓ equivalent: no mean beyond |z| = %.2f, "+
			"no layer beyond ‖z_l‖ = %.2f and no avg_variance beyond |z| = %.2f",
			r.Threshold, r.Threshold, r.Threshold)
	default:
		verdict.WriteString("✗ different")
	}
	if r.Mode == compare.ModeStat {
		fmt.Fprintf(&verdict, " (Bonferroni over %d neuron means, %d layers "+
			"and %d avg_variance values: "+
			"two correct bakes are called different with probability at most %g)",
			r.Neurons, r.Layers, r.Variances, r.Alpha)
	}
	fmt.Fprintln(w, verdict.String())
}

// preparedNote says which sides' prepared Arrow split was read equal to
// their rows, which whestbench's loader reads in their place.
func preparedNote(s compare.SplitResult) string {
	switch {
	case s.PreparedA && s.PreparedB:
		return " (the prepared Arrow splits of A and B read as their rows)"
	case s.PreparedA:
		return " (A's prepared Arrow split reads as its rows; B has none)"
	case s.PreparedB:
		return " (B's prepared Arrow split reads as its rows; A has none)"
	}
	return ""
}

// printMLPStats prints a split's per-MLP statistics: every MLP, or the
// shownMLPs of largest |z|; --json has all.
func printMLPStats(w io.Writer, s compare.SplitResult) {
	rows := slices.Clone(s.MLPStats)
	if len(rows) > shownMLPs {
		slices.SortStableFunc(rows, func(a, b compare.MLPStat) int {
			return cmp.Compare(max(b.MaxZ, b.VarianceZ), max(a.MaxZ, a.VarianceZ))
		})
		fmt.Fprintf(w, "  the %d MLPs of largest |z| of %d (--json lists all):\n",
			shownMLPs, len(rows))
		rows = rows[:shownMLPs]
	}
	layer := func(l int) string {
		if l == s.Depth {
			return "final"
		}
		return fmt.Sprint(l)
	}
	const row = "  %8s  %20s  %8s  %-15s  %6s  %9s  %-5s  %13s  %10s  %12s\n"
	fmt.Fprintf(w, row, "mlp_id", "mlp_seed",
		"max|z|", "at layer/neuron", "beyond",
		"max ‖z_l‖", "layer", "layers beyond",
		"σ̂", "avg_var |z|")
	for _, m := range rows {
		fmt.Fprintf(w, row, fmt.Sprint(m.MLPID), fmt.Sprint(m.Seed),
			fmt.Sprintf("%.2f", m.MaxZ),
			layer(m.Layer)+"/"+fmt.Sprint(m.Neuron),
			fmt.Sprint(m.Beyond),
			fmt.Sprintf("%.2f", m.LayerNorm), layer(m.NormLayer), fmt.Sprint(m.LayersBeyond),
			fmt.Sprintf("%.4g", m.Sigma), fmt.Sprintf("%.2f", m.VarianceZ))
	}
}
