package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/compare"
	"github.com/whestbake/whestbake/internal/hub"
)

// errDatasetsDiffer is compare's verdict "different": exit 1.
var errDatasetsDiffer = errors.New("the datasets differ")

// shownMLPs bounds the rows of the per-MLP table in text output (the JSON
// has every MLP).
const shownMLPs = 20

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Is dataset B the same ground truth as A? Split by split, MLP by MLP: bit for bit (--mode exact) or within Monte Carlo error (--mode stat)",
		Long: `Compares two complete datasets split by split and MLP by MLP: directories,
or hf://OWNER/NAME[@REVISION] (downloaded to a temporary directory first, checked
as dataset download checks them, and removed after);
the MLPs must be the same (the same mlp_seed in the same place) and of the same
shape, else exit 2.

--mode exact (the default when both were baked with the same sampler, algorithm
and n_samples): names, weights, all_layer_means and final_means bit-identical,
avg_variance within numpy.isclose(rtol=1e-12, atol=1e-15); the first differences
are shown.
--mode stat (the default otherwise, e.g. philox against numpy, or whestbench's
torch backend against its CPU one): names and weights bit-identical, and each
neuron's mean within Monte Carlo error: z = Δmean/σ̂ with a conservative σ̂ from
the datasets (docs/WHESTBENCH.md); a neuron whose |z|, or a layer whose
‖z_l‖ = sqrt(Σ z²), is beyond the Bonferroni threshold for an overall
false-alarm rate --alpha counts as different.

Exit 0: the same (exact) or equivalent (stat); 1: different; 2: bad input.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, args[0], args[1], f) },
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
	fl.StringVar(&f.mode, "mode", "", "exact or stat (default: exact when sampler, algorithm and n_samples match, else stat)")
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha, "stat: overall false-alarm rate for two correct bakes")
	fl.IntVar(&f.shown, "show", 10, "how many differences to show")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON (every MLP's statistics included)")
	f.hubSource.register(cmd)
}

// compareModes are --mode's values; "" lets compare.Run choose.
var compareModes = map[string]compare.Mode{"": "", "exact": compare.ModeExact, "stat": compare.ModeStat}

func runCompare(cmd *cobra.Command, a, b string, f compareFlags) error {
	m, ok := compareModes[f.mode]
	if !ok {
		return cmdline.Usagef("--mode %q: use exact or stat", f.mode)
	}
	if f.alpha <= 0 || f.alpha > compare.MaxAlpha {
		return cmdline.Usagef("--alpha=%g: use a false-alarm rate in (0, %g]", f.alpha, compare.MaxAlpha)
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
	res, err := compare.Run(compare.Input{A: dirs[0], B: dirs[1], Mode: m, Alpha: f.alpha, Shown: f.shown})
	var ie *compare.InputError
	if errors.As(err, &ie) {
		return cmdline.Usage(err)
	}
	if err != nil {
		return err
	}
	res.A, res.B = a, b
	out := cmd.OutOrStdout()
	if f.asJSON {
		if err := writeJSON(out, res); err != nil {
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

// compareSource is src as a directory to compare: itself, or for hf://
// the revision downloaded into a temporary directory that cleanup removes.
// A repository or revision the Hub does not have is bad input (exit 2).
func compareSource(cmd *cobra.Command, h hubFlags, src string) (dir string, cleanup func(), err error) {
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
	if _, err := c.Download(cmd.Context(), hub.DownloadOptions{Repo: repo, Revision: rev, Output: dir}); err != nil {
		cleanup()
		if errors.Is(err, hub.ErrNotFound) {
			err = cmdline.Usage(fmt.Errorf("%s: %w", src, err))
		}
		return "", nil, err
	}
	return dir, cleanup, nil
}

func printComparison(w io.Writer, r *compare.Result) {
	fmt.Fprintf(w, "Comparing %s with %s: mode %s (%s)\n", printable(r.A), printable(r.B), r.Mode, printable(r.ModeReason))
	for _, s := range r.Splits {
		fmt.Fprintf(w, "split %s: %d MLPs, n_samples %d and %d: %d differ\n",
			printable(s.Name), s.MLPs, s.NSamplesA, s.NSamplesB, s.DifferentMLPs)
		if r.Mode != compare.ModeStat || len(s.MLPStats) == 0 {
			continue
		}
		rows := slices.Clone(s.MLPStats)
		if len(rows) > shownMLPs {
			slices.SortStableFunc(rows, func(a, b compare.MLPStat) int {
				switch {
				case a.MaxZ > b.MaxZ:
					return -1
				case a.MaxZ < b.MaxZ:
					return 1
				}
				return 0
			})
			fmt.Fprintf(w, "  the %d MLPs of largest |z| of %d (--json lists all):\n", shownMLPs, len(rows))
			rows = rows[:shownMLPs]
		}
		fmt.Fprintf(w, "  %8s  %20s  %8s  %-15s  %6s  %9s  %-5s  %13s  %10s\n", "mlp_id", "mlp_seed", "max|z|", "at layer/neuron", "beyond", "max ‖z_l‖", "layer", "layers beyond", "σ̂")
		for _, m := range rows {
			fmt.Fprintf(w, "  %8d  %20d  %8.2f  %-15s  %6d  %9.2f  %-5d  %13d  %10.4g\n", m.MLPID, m.Seed, m.MaxZ,
				fmt.Sprintf("%d/%d", m.Layer, m.Neuron), m.Beyond, m.LayerNorm, m.NormLayer, m.LayersBeyond, m.Sigma)
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
				printable(d.Split), d.MLPID, d.Seed, d.Field, at, printable(d.A), printable(d.B))
		}
	}
	var verdict strings.Builder
	switch {
	case r.Same && r.Mode == compare.ModeExact:
		verdict.WriteString("✓ identical")
	case r.Same:
		fmt.Fprintf(&verdict, "✓ equivalent: no neuron beyond |z| = %.2f and no layer beyond ‖z_l‖ = %.2f", r.Threshold, r.Threshold)
	default:
		verdict.WriteString("✗ different")
	}
	if r.Mode == compare.ModeStat {
		fmt.Fprintf(&verdict, " (Bonferroni over %d neurons and %d layers: two correct bakes are called different with probability at most %g)", r.Neurons, r.Layers, r.Alpha)
	}
	fmt.Fprintln(w, verdict.String())
}
