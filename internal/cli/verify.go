package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/verify"
)

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use: "verify DIR [--k N | --mlps I,J,...] [--max-samples M]",
		Short: "Recompute chosen MLPs: weights bit-exact; " +
			"statistics bit-exact, or within 5/√M with --max-samples M",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runVerify(cmd, args[0], f) },
	}
	f.register(cmd)
	return cmd
}

type verifyFlags struct {
	k, threads, maxSamples   int64
	pick, split, dotOverride string
	asJSON                   bool
}

func (f *verifyFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Var(newCount(&f.k, 3, 1<<24), "k", "number of MLPs to check per split, spread evenly")
	fl.StringVar(&f.pick, "mlps", "",
		"comma-separated row positions to check instead of --k (e.g. 0,5,9), or 'all'")
	fl.Var(newCount(&f.maxSamples, 0, bakeapi.MaxNSamples), "max-samples",
		"recompute from this many samples only and compare within 5/√M")
	fl.StringVar(&f.split, "split", "", "verify only this split")
	fl.StringVar(&f.dotOverride, "dot-product", "",
		"numpy sampler: override the recorded dot product (fma or muladd)")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fromKey(fl, map[string]string{"threads": "worker.threads"})
	jsonFlag(cmd, &f.asJSON, "print every check as JSON")
}

func runVerify(cmd *cobra.Command, dir string, f verifyFlags) error {
	d, err := dataset.Open(dir, true)
	if err != nil {
		return err
	}
	if f.split != "" && d.Info.Split(f.split) == nil {
		return cmdline.Usagef("--split %s: the dataset has no such split", f.split)
	}
	res, err := verify.Dataset(cmd.Context(), verify.Input{
		Dataset:    d,
		Split:      f.split,
		Picks:      f.pick,
		K:          int(f.k),
		MaxSamples: f.maxSamples,
		Threads:    int(f.threads),
		Dot:        f.dotOverride,
		Names:      flagOf,
	})
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		err = writeVerifyJSON(out, d.Path, res)
	} else {
		for _, s := range res.Splits {
			printSplitChecks(out, s)
		}
	}
	if err != nil {
		return err
	}
	if res.Failed > 0 {
		return fmt.Errorf("%d MLP(s) failed verification", res.Failed)
	}
	return nil
}

// printSplitChecks prints one split's verdict per MLP.
func printSplitChecks(out io.Writer, s verify.VerifiedSplit) {
	precision := ""
	if p := s.Info.Spec.Precision; p != bakeapi.PrecisionFP32 {
		precision = fmt.Sprintf(", precision %s on %s", p, safetext.Line(s.Info.TensorCores.Arch))
	}
	fmt.Fprintf(out, "split %s (sampler %s%s, n_samples %d):\n",
		safetext.Line(s.Name), safetext.Line(orDash(string(s.Info.Spec.Sampler))), precision,
		s.Info.Spec.NSamples)
	names := map[string]string{
		verify.NameOK:           "name ok",
		verify.NameMismatch:     "NAME MISMATCH",
		verify.NamePartial:      "name not checked (partial)",
		verify.NameSaltWithheld: "name not checked (salt withheld: set " + dataset.SaltEnv + ")",
	}
	for _, c := range s.Checks {
		mark := "✓"
		if !c.OK {
			mark = "✗"
		}
		tol := ""
		if c.Tolerance > 0 {
			tol = fmt.Sprintf(" (max |Δmean| %.3g ≤ %.3g)", c.MaxAbsDiff, c.Tolerance)
		} else if c.Stats == "MISMATCH" {
			tol = fmt.Sprintf(" (max |Δmean| %.3g)", c.MaxAbsDiff)
		}
		weights := map[bool]string{true: "bit-exact", false: "MISMATCH"}[c.WeightsOK]
		fmt.Fprintf(out, "  %s mlp %d %s: weights %s, %s, statistics %s%s\n",
			mark, c.MLPID, safetext.Line(c.Name), weights, names[s.NameCheck(c)], c.Stats, tol)
	}
}

// verifyJSON is whestbake.verify/v1.
type verifyJSON struct {
	Schema string            `json:"schema"`
	Path   string            `json:"path"`
	OK     bool              `json:"ok"`
	Failed int               `json:"failed"`
	Splits []verifySplitJSON `json:"splits"`
}

type verifySplitJSON struct {
	Name      string            `json:"name"`
	Sampler   string            `json:"sampler"`
	Precision string            `json:"precision,omitempty"` // tf32x3, or absent for fp32
	NSamples  int64             `json:"n_samples"`
	Checks    []verifyCheckJSON `json:"checks"`
}

type verifyCheckJSON struct {
	MLPID     int32  `json:"mlp_id"`
	Name      string `json:"mlp_name"`
	OK        bool   `json:"ok"`
	WeightsOK bool   `json:"weights_bit_exact"`
	NameCheck string `json:"name_check"`
	// Statistics is bit-exact, within tolerance, within tf32x3's tolerance of fp32,
	// MISMATCH, or skipped: why.
	Statistics string    `json:"statistics"`
	MaxAbsDiff jsonFloat `json:"max_abs_diff"`
	Tolerance  jsonFloat `json:"tolerance"` // 0: bit for bit
}

func writeVerifyJSON(w io.Writer, path string, res verify.Output) error {
	v := verifyJSON{
		Schema: verifySchema,
		Path:   path,
		OK:     res.Failed == 0,
		Failed: res.Failed,
		Splits: []verifySplitJSON{},
	}
	for _, s := range res.Splits {
		js := verifySplitJSON{
			Name:      s.Name,
			Sampler:   string(s.Info.Spec.Sampler),
			Precision: string(s.Info.Spec.Precision),
			NSamples:  s.Info.Spec.NSamples,
			Checks:    []verifyCheckJSON{},
		}
		for _, c := range s.Checks {
			js.Checks = append(js.Checks, verifyCheckJSON{
				MLPID:      c.MLPID,
				Name:       c.Name,
				OK:         c.OK,
				WeightsOK:  c.WeightsOK,
				NameCheck:  s.NameCheck(c),
				Statistics: c.Stats,
				MaxAbsDiff: jsonFloat(c.MaxAbsDiff),
				Tolerance:  jsonFloat(c.Tolerance),
			})
		}
		v.Splits = append(v.Splits, js)
	}
	return writeJSON(w, v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// splitValue reads key for one split: a combined dataset's per-split entry
// takes precedence over the top-level metadata.
func splitValue(md dataset.Metadata, split, key string) (any, bool) {
	if sp, ok := md.GetObject("splits"); ok {
		if e, ok := sp.GetObject(split); ok {
			if v, ok := e.Get(key); ok {
				return v, true
			}
		}
	}
	return md.Get(key)
}
