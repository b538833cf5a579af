package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
)

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify DIR [--k N | --mlps I,J,...] [--max-samples M]",
		Short: "Recompute chosen MLPs: weights bit-exact; statistics bit-exact, or within 5/√M with --max-samples M",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runVerify(cmd, args[0], f) },
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
	fl.StringVar(&f.pick, "mlps", "", "comma-separated row positions to check instead of --k (e.g. 0,5,9), or 'all'")
	fl.Var(newCount(&f.maxSamples, 0, bakeapi.MaxNSamples), "max-samples", "recompute from this many samples only and compare within 5/√M")
	fl.StringVar(&f.split, "split", "", "verify only this split")
	fl.StringVar(&f.dotOverride, "dot-product", "", "numpy sampler: override the recorded dot product (fma or muladd)")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fromKey(fl, map[string]string{"threads": "worker.threads"})
	jsonFlag(cmd, &f.asJSON, "print every check as JSON")
}

// splitVerifier recomputes the picked MLPs of one split.
type splitVerifier struct {
	info bake.SplitInfo
	v    *bake.Verifier
}

func runVerify(cmd *cobra.Command, dir string, f verifyFlags) error {
	d, err := dataset.Open(dir, true)
	if err != nil {
		return err
	}
	if f.split != "" && d.Info.Split(f.split) == nil {
		return cmdline.Usagef("--split %s: the dataset has no such split", f.split)
	}
	// One pass over the rows: each picked row is recomputed as it
	// streams by, and the prepared tree compared with it, so memory
	// stays at one row however large the dataset; the results are
	// printed once every row checked out.
	verifiers, err := newSplitVerifiers(cmd.Context(), d, f)
	if err != nil {
		return err
	}
	err = d.ScanPrepared(func(s *dataset.SplitData, r dataset.Row) error {
		if sv, ok := verifiers[s.Name]; ok {
			return sv.v.Add(r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var splits []verifiedSplit
	failed := 0
	for _, s := range d.Splits {
		sv, ok := verifiers[s.Name]
		if !ok {
			continue
		}
		checks, err := sv.v.Checks()
		if err != nil {
			return err
		}
		for _, c := range checks {
			if !c.OK {
				failed++
			}
		}
		splits = append(splits, verifiedSplit{name: s.Name, info: sv.info, checks: checks})
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		err = writeVerifyJSON(out, d.Path, splits, failed)
	} else {
		for _, s := range splits {
			printSplitChecks(out, s)
		}
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d MLP(s) failed verification", failed)
	}
	return nil
}

// newSplitVerifiers makes a verifier, by split name, for each split --split
// leaves in.
func newSplitVerifiers(ctx context.Context, d *dataset.Dir, f verifyFlags) (map[string]splitVerifier, error) {
	verifiers := map[string]splitVerifier{}
	for _, s := range d.Splits {
		if f.split != "" && s.Name != f.split {
			continue
		}
		info, err := splitInfo(d, s, f.dotOverride)
		if err != nil {
			return nil, err
		}
		picks, err := choosePicks(f.pick, int(f.k), int(d.Info.Split(s.Name).NMLPs))
		if err != nil {
			return nil, err
		}
		v, err := bake.NewVerifier(ctx, info, picks, f.maxSamples, int(f.threads))
		if err != nil {
			return nil, err
		}
		verifiers[s.Name] = splitVerifier{info, v}
	}
	return verifiers, nil
}

// verifiedSplit is one split's verdicts.
type verifiedSplit struct {
	name   string
	info   bake.SplitInfo
	checks []bake.Check
}

// nameCheck is what became of an MLP's name: checked (ok or mismatch), or
// not, because the dataset is a partial or its salt is withheld.
func (s verifiedSplit) nameCheck(c bake.Check) string {
	switch {
	case c.NameTested && c.NameOK:
		return "ok"
	case c.NameTested:
		return "mismatch"
	case s.info.Complete:
		return "salt withheld"
	}
	return "partial"
}

// printSplitChecks prints one split's verdict per MLP.
func printSplitChecks(out io.Writer, s verifiedSplit) {
	fmt.Fprintf(out, "split %s (sampler %s, n_samples %d):\n",
		printable(s.name), printable(orDash(string(s.info.Spec.Sampler))), s.info.Spec.NSamples)
	names := map[string]string{
		"ok":            "name ok",
		"mismatch":      "NAME MISMATCH",
		"partial":       "name not checked (partial)",
		"salt withheld": "name not checked (salt withheld: set " + dataset.SaltEnv + ")",
	}
	for _, c := range s.checks {
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
			mark, c.MLPID, printable(c.Name), weights, names[s.nameCheck(c)], c.Stats, tol)
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
	Name     string            `json:"name"`
	Sampler  string            `json:"sampler"`
	NSamples int64             `json:"n_samples"`
	Checks   []verifyCheckJSON `json:"checks"`
}

type verifyCheckJSON struct {
	MLPID     int32  `json:"mlp_id"`
	Name      string `json:"mlp_name"`
	OK        bool   `json:"ok"`
	WeightsOK bool   `json:"weights_bit_exact"`
	NameCheck string `json:"name_check"`
	// Statistics is bit-exact, within tolerance, MISMATCH, or skipped: why.
	Statistics string    `json:"statistics"`
	MaxAbsDiff jsonFloat `json:"max_abs_diff"`
	Tolerance  jsonFloat `json:"tolerance"` // 0: bit for bit
}

func writeVerifyJSON(w io.Writer, path string, splits []verifiedSplit, failed int) error {
	v := verifyJSON{
		Schema: verifySchema,
		Path:   path,
		OK:     failed == 0,
		Failed: failed,
		Splits: []verifySplitJSON{},
	}
	for _, s := range splits {
		js := verifySplitJSON{
			Name:     s.name,
			Sampler:  string(s.info.Spec.Sampler),
			NSamples: s.info.Spec.NSamples,
			Checks:   []verifyCheckJSON{},
		}
		for _, c := range s.checks {
			js.Checks = append(js.Checks, verifyCheckJSON{
				MLPID:      c.MLPID,
				Name:       c.Name,
				OK:         c.OK,
				WeightsOK:  c.WeightsOK,
				NameCheck:  s.nameCheck(c),
				Statistics: c.Stats,
				MaxAbsDiff: jsonFloat(c.MaxAbsDiff),
				Tolerance:  jsonFloat(c.Tolerance),
			})
		}
		v.Splits = append(v.Splits, js)
	}
	return writeJSON(w, v)
}

// splitInfo reads what verification needs from the dataset's metadata; per-split
// entries of a combined dataset take precedence over top-level keys.
func splitInfo(d *dataset.Dir, s dataset.SplitData, dot string) (bake.SplitInfo, error) {
	md, sp := d.Info, d.Info.Split(s.Name)
	info := bake.SplitInfo{Spec: bakeapi.Spec{Width: s.Width, Depth: s.Depth}, Protocol: md.SeedProtocol.Version, Complete: !md.IsPartial}
	if md.NSamples <= 0 {
		return info, fmt.Errorf("%s: metadata.json has no positive n_samples; cannot recompute statistics", d.Path)
	}
	info.Spec.NSamples = md.NSamples
	switch info.Protocol {
	case dataset.SeedProtocolV2Version:
		if sp.Seed == nil || !sp.Seed.IsUint64() {
			return info, fmt.Errorf("%s: protocol 2.0 split %s has no integer root seed in metadata", d.Path, s.Name)
		}
		info.RootSeed = sp.Seed.Uint64()
	case dataset.SeedProtocolV4Version:
		// Weights and statistics do not depend on the salt, so a withheld
		// one that was not given only leaves the names unchecked.
		salt, err := bake.DatasetSalt(md.SeedProtocol, os.Getenv)
		if err != nil && !errors.Is(err, bake.ErrSaltWithheld) {
			return info, fmt.Errorf("%s: %w", d.Path, err)
		}
		info.Salt = salt
	}
	switch sampler := cmp.Or(sp.Sampler, md.Sampler); {
	case sampler != "":
		info.Spec.Sampler = bakeapi.Sampler(sampler)
	case cmp.Or(sp.Backend, md.Backend) == "flopscope": // whestbench's CPU backend = our numpy sampler
		info.Spec.Sampler = bakeapi.SamplerNumpy
	}
	if info.Spec.Sampler == bakeapi.SamplerNumpy {
		info.Spec.Dot = bakeapi.DotProduct(cmp.Or(dot, sp.DotProduct, md.DotProduct, string(bakeapi.DotFMA)))
	}
	return info, nil
}

// choosePicks returns row positions: an explicit list, "all", or k spread evenly.
func choosePicks(spec string, k, n int) ([]int, error) {
	if spec == "all" || (spec == "" && k >= n) {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	if spec != "" {
		var out []int
		for _, p := range strings.Split(spec, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || i < 0 || i >= n {
				return nil, fmt.Errorf("--mlps: %q is not a row position in [0, %d)", p, n)
			}
			out = append(out, i)
		}
		return out, nil
	}
	out := make([]int, k)
	for i := range out {
		out[i] = i * (n - 1) / max(1, k-1)
	}
	return out, nil
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
