package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/hostinfo"
	"github.com/whestbake/whestbake/internal/localbake"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/settings"
)

type datasetBakeFlags struct {
	nMLPs, nSamples, width, depth, threads int64
	seedsFile, slice, mlpRange             string
	split, config, sampler, dot, device    string
	precision                              string
	output, maxMemory                      string
	seed, chunk                            int64
	seedProtocol, seedSalt, saltID         string
	withholdSalt                           bool
}

func newDatasetBakeCmd() *cobra.Command {
	var f datasetBakeFlags
	cmd := &cobra.Command{
		Use:   "bake --n-mlps N --n-samples N --width W --depth D --output DIR [flags]",
		Short: "Bake a dataset (or a slice of one, as a partial) on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := splitFromConfig(cmd); err != nil {
				return err
			}
			keyNote := func(flag string) string { return requiredKeyNote(cmd, flag) }
			if err := cmdline.CheckRequired(cmd, keyNote); err != nil {
				return err
			}
			return runDatasetBake(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.Var(newFieldCount(&f.nMLPs, 0), "n-mlps",
		"MLPs in the whole dataset (also when baking a slice)")
	fl.Var(newFieldCount(&f.nSamples, 0), "n-samples",
		"Monte Carlo samples per MLP (1e9 and 1_000_000_000 accepted)")
	fl.Var(newFieldCount(&f.width, 0), "width", "neurons per layer")
	fl.Var(newFieldCount(&f.depth, 0), "depth", "layers")
	fl.StringVar(&f.seedsFile, "mlp-seeds", "",
		"JSON array of n-mlps input seeds (from generate-seeds); required to merge slices")
	fl.Int64Var(&f.seed, "seed", 0, "derive the input seeds from this root seed "+
		"instead of OS entropy (like generate-seeds --seed)")
	fl.StringVar(&f.slice, "slice", "",
		"bake slice K/N of the MLPs (whestbench semantics: [K·n/N, (K+1)·n/N))")
	fl.StringVar(&f.mlpRange, "mlp-range", "", "bake MLPs START-END, both inclusive")
	fl.StringVar(&f.split, "split", "public",
		"split name ([a-z][a-z0-9]*: whestbench and HF datasets both load it); "+
			"with a config file, which of its bake.splits to bake "+
			"(it also gives --config, --n-mlps, --seed or --mlp-seeds)")
	fl.StringVar(&f.config, "config", "default",
		"dataset config name ([a-z][a-z0-9]*(-[a-z0-9]+)*)")
	fl.StringVar(&f.sampler, "sampler", string(bakeapi.SamplerPhilox),
		"input sampler: philox (exact, GPU twin) or numpy (whestbench's CPU backend; "+
			"docs/NUMPY.md says where bit for bit)")
	fl.StringVar(&f.dot, "dot-product", string(bakeapi.DotFMA),
		"numpy sampler's float32 dot product: fma (whestbench fixtures) "+
			"or muladd (a BLAS without FMA); which real numpy builds match: docs/NUMPY.md")
	fl.StringVar(&f.device, "device", gpuengine.DeviceAuto,
		"auto, cpu or cuda (explicit choices never fall back)")
	fl.StringVar(&f.precision, "precision", "fp32",
		"philox forward pass: fp32 (the CPU twin's bits on every engine) or tf32x3 "+
			"(CUDA tensor cores, --device cuda: faster, within 5e-6 of fp32, "+
			"reproducible on one GPU architecture; docs/GPU.md)")
	fl.Var(newFieldCount(&f.chunk, 0), "chunk-size",
		"philox: samples per step/checkpoint (never changes results); numpy: not allowed")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fl.StringVarP(&f.output, "output", "o", "", "output directory (must not exist)")
	fl.StringVar(&f.maxMemory, "max-memory", "",
		"memory this bake may use (e.g. 16GiB); default: the cgroup limit, else physical memory. "+
			"A shape that needs more is refused before anything runs")
	fl.StringVar(&f.seedProtocol, "seed-protocol", string(bakeapi.SeedProtocolV3),
		"whestbench seed protocol: 3.0, or 4.0 (participant seeds and names keyed by a salt)")
	fl.StringVar(&f.seedSalt, "seed-salt", "",
		"protocol 4.0: the salt as 64 hex digits, published in metadata.json "+
			"(required for --slice/--mlp-range, generated otherwise)")
	fl.BoolVar(&f.withholdSalt, "withhold-salt", false,
		"protocol 4.0: record only the salt's SHA-256 and take the salt from "+dataset.SaltEnv)
	fl.StringVar(&f.saltID, "salt-id", "",
		"protocol 4.0: a name for the salt, recorded for its holders "+
			"(required with --withhold-salt)")
	fromKey(fl, map[string]string{
		"width":         "bake.width",
		"depth":         "bake.depth",
		"n-samples":     "bake.n-samples",
		"sampler":       "bake.sampler",
		"dot-product":   "bake.dot-product",
		"chunk-size":    "bake.chunk-size",
		"seed-protocol": "bake.seed-protocol",
		"withhold-salt": "bake.withhold-salt",
		"salt-id":       "bake.salt-id",
		"device":        "worker.device",
		"threads":       "worker.threads",
		"max-memory":    "worker.max-memory",
	})
	cmdline.Require(cmd, "n-mlps", "n-samples", "width", "depth", "output")
	return cmd
}

// splitFromConfig fills the split flags of `dataset bake` from the config
// file's bake.splits, so that one file bakes a split here as the Temporal
// bake would: the split --split names, else the only one. The command line
// wins, and a seed or seeds file given there replaces both of the split's.
func splitFromConfig(cmd *cobra.Command) error {
	splits := loadedConfig(cmd).Bake.Splits
	if len(splits) == 0 {
		return nil
	}
	fs := cmd.Flags()
	names := make([]string, len(splits))
	var s *settings.Split
	for i := range splits {
		names[i] = splits[i].Name
		if splits[i].Name == fs.Lookup("split").Value.String() {
			s = &splits[i]
		}
	}
	switch {
	case fs.Changed("split") && s == nil:
		return cmdline.Usagef("--split %s: the config file's bake.splits has no such split "+
			"(it has %s)", fs.Lookup("split").Value, strings.Join(names, ", "))
	case !fs.Changed("split") && len(splits) > 1:
		return cmdline.Usagef("the config file's bake.splits has %d splits (%s): "+
			"choose one with --split", len(splits), strings.Join(names, ", "))
	case s == nil:
		s = &splits[0]
	}
	values := map[string]string{"split": s.Name, "config": s.Config}
	if s.NMLPs > 0 {
		values["n-mlps"] = strconv.FormatInt(int64(s.NMLPs), 10)
	}
	if !fs.Changed("seed") && !fs.Changed("mlp-seeds") {
		if s.Seed != nil {
			values["seed"] = strconv.FormatUint(*s.Seed, 10)
		}
		if s.SeedsFile != "" {
			values["mlp-seeds"] = s.SeedsFile
		}
	}
	for flag, v := range values {
		if fs.Changed(flag) {
			continue
		}
		if err := fs.Set(flag, v); err != nil {
			return cmdline.Usagef("bake.splits %s: its %s %s does not fit --%s: %v",
				s.Name, flag, v, flag, err)
		}
	}
	return nil
}

// requiredKeyNote says where else a required flag of `dataset bake` can come from.
func requiredKeyNote(cmd *cobra.Command, flag string) string {
	if key := keyOf(cmd.Flags().Lookup(flag)); key != "" {
		return " (or " + key + " in the config file, or " + settings.EnvName(key) + ")"
	}
	if flag == "n-mlps" {
		return " (or a split's n-mlps in the config file's bake.splits)"
	}
	return ""
}

// planDatasetBake checks everything `dataset bake` was given, before any compute
// or output, and returns what to bake.
func planDatasetBake(cmd *cobra.Command, f datasetBakeFlags) (rows.Plan, error) {
	if f.slice != "" && f.mlpRange != "" {
		return rows.Plan{}, cmdline.Usagef("use either --mlp-range or --slice, not both")
	}
	fs := cmd.Flags()
	if f.seedsFile != "" && fs.Changed("seed") {
		return rows.Plan{}, cmdline.Usagef("use either --mlp-seeds or --seed, not both")
	}
	var rootSeed *int64
	if fs.Changed("seed") {
		rootSeed = &f.seed
	}
	plan, err := localbake.Plan(localbake.Input{
		NMLPs:  int(f.nMLPs),
		Split:  f.split,
		Config: f.config,
		Spec: bakeapi.Spec{
			Width:        int(f.width),
			Depth:        int(f.depth),
			NSamples:     f.nSamples,
			Sampler:      bakeapi.Sampler(f.sampler),
			ChunkSize:    int(f.chunk),
			Dot:          bakeapi.DotProduct(f.dot),
			SeedProtocol: bakeapi.SeedProtocol(f.seedProtocol),
			Salt:         bakeapi.Salt{Withhold: f.withholdSalt, ID: f.saltID},
			Precision:    precisionOf(f.precision),
		},
		SaltHex:     f.seedSalt,
		Sliced:      fs.Changed("slice") || fs.Changed("mlp-range"),
		Slice:       f.slice,
		MLPRange:    f.mlpRange,
		SeedsFile:   f.seedsFile,
		RootSeed:    rootSeed,
		Threads:     int(f.threads),
		MemoryLimit: func() (int64, error) { return memoryLimit(f.maxMemory) },
		Output:      f.output,
		Names:       flagOf,
	})
	if errors.As(err, new(localbake.SettingsError)) {
		return rows.Plan{}, cmdline.Usage(err)
	}
	return plan, err
}

// precisionOf is --precision as a Spec's: fp32, the default, is the empty one.
func precisionOf(flag string) bakeapi.Precision {
	if flag == "fp32" {
		return bakeapi.PrecisionFP32
	}
	return bakeapi.Precision(flag)
}

// memoryLimit is --max-memory, by default the cgroup limit, else physical
// memory.
func memoryLimit(maxMemory string) (int64, error) {
	if maxMemory == "" {
		return hostinfo.MemoryLimit(), nil
	}
	n, err := settings.ParseByteSize(maxMemory)
	if err != nil {
		return 0, cmdline.Usagef("--max-memory: %v", err)
	}
	return n, nil
}

func runDatasetBake(cmd *cobra.Command, f datasetBakeFlags) error {
	out := cmd.OutOrStdout()
	plan, err := planDatasetBake(cmd, f)
	if err != nil {
		return err
	}
	rng := plan.Range
	n := plan.NMLPs
	eng, err := localbake.OpenEngine(f.device, plan, int(f.threads))
	if err != nil {
		return bakeapi.Rename(err, flagOf)
	}
	defer func() { _ = gpuengine.Close(eng) }() // the GPU's modules and memory; nothing for the CPU
	if plan.Seeds.Generated && rng.Len() != n {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: baking a slice with generated seeds; "+
			"other slices must use the same seeds (pass --mlp-seeds or the same --seed) "+
			"or merge will refuse them")
	}
	fmt.Fprintf(out, "Baking %d of %d MLPs (width=%d, depth=%d, n_samples=%d, sampler=%s) → %s\n",
		rng.Len(), n, f.width, f.depth, f.nSamples, f.sampler, f.output)
	if note := bakeclient.SaltNote(plan.Spec); note != "" {
		fmt.Fprintln(out, note)
	}
	start := time.Now()
	bar := newProgress(cmd.ErrOrStderr(), "Sampling ground truth", "samples",
		int64(rng.Len())*f.nSamples)
	err = localbake.WriteDir(cmd.Context(), localbake.WriteInput{
		Plan:     plan,
		Engine:   eng,
		Threads:  int(f.threads),
		Progress: bar.Add,
		Output:   f.output,
	})
	bar.Finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "✓ Wrote %s in %s (%s)\n",
		f.output, formatDuration(time.Since(start)), bytesize.Format(dirSize(f.output)))
	if rng.Len() != n {
		fmt.Fprintf(out, "tip: this is a partial (MLPs [%d, %d) of %d); "+
			"merge all slices with `whestbake dataset merge <partials> --output <dir>`\n",
			rng.Start, rng.End, n)
	}
	return nil
}

// flagOf names a bakeapi field as the flag that sets it: the flags are named
// like the fields.
func flagOf(field string) string { return "--" + field }
