package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/seeds"
)

type bakeFlags struct {
	nMLPs, nSamples, width, depth, threads int64
	seedsFile, slice, mlpRange             string
	split, config, sampler, dot, device    string
	output                                 string
	seed, chunk                            int64
}

func newBakeCmd() *cobra.Command {
	var f bakeFlags
	cmd := &cobra.Command{
		Use:   "bake --n-mlps N --n-samples N --width W --depth D --output DIR [flags]",
		Short: "Bake a dataset (or a slice of one, as a partial) on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, req := range []string{"n-mlps", "n-samples", "width", "depth", "output"} {
				if !cmd.Flags().Changed(req) {
					return cmdline.Usagef("--%s is required", req)
				}
			}
			return runBake(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.Var(newFieldCount(&f.nMLPs, 0), "n-mlps", "MLPs in the whole dataset (also when baking a slice)")
	fl.Var(newFieldCount(&f.nSamples, 0), "n-samples", "Monte Carlo samples per MLP (1e9 and 1_000_000_000 accepted)")
	fl.Var(newFieldCount(&f.width, 0), "width", "neurons per layer")
	fl.Var(newFieldCount(&f.depth, 0), "depth", "layers")
	fl.StringVar(&f.seedsFile, "mlp-seeds", "", "JSON array of n-mlps input seeds (from generate-seeds); required to merge slices")
	fl.Int64Var(&f.seed, "seed", 0, "derive the input seeds from this root seed instead of OS entropy (like generate-seeds --seed)")
	fl.StringVar(&f.slice, "slice", "", "bake slice K/N of the MLPs (whestbench semantics: [K·n/N, (K+1)·n/N))")
	fl.StringVar(&f.mlpRange, "mlp-range", "", "bake MLPs START-END, both inclusive")
	fl.StringVar(&f.split, "split", "public", "split name ([a-z][a-z0-9]*(-[a-z0-9]+)*)")
	fl.StringVar(&f.config, "config", "default", "dataset config name (same rule as --split)")
	fl.StringVar(&f.sampler, "sampler", string(bakeapi.SamplerPhilox), "input sampler: philox (exact, GPU twin) or numpy (whestbench's CPU backend, bit for bit)")
	fl.StringVar(&f.dot, "dot-product", string(bakeapi.DotFMA), "numpy sampler's float32 dot product: fma (whestbench fixtures) or muladd (a BLAS without FMA); which real numpy builds match: docs/NUMPY.md")
	fl.StringVar(&f.device, "device", gpuengine.DeviceAuto, "auto, cpu or cuda (explicit choices never fall back)")
	fl.Var(newFieldCount(&f.chunk, 0), "chunk-size", "philox: samples per step/checkpoint (never changes results); numpy: not allowed")
	fl.Var(newCount(&f.threads, int64(gpuengine.DefaultThreads()), 4096), "threads", "CPU threads")
	fl.StringVarP(&f.output, "output", "o", "", "output directory (must not exist)")
	return cmd
}

func runBake(cmd *cobra.Command, f bakeFlags) error {
	out := cmd.OutOrStdout()
	if f.slice != "" && f.mlpRange != "" {
		return cmdline.Usagef("use either --mlp-range or --slice, not both")
	}
	if f.seedsFile != "" && cmd.Flags().Changed("seed") {
		return cmdline.Usagef("use either --mlp-seeds or --seed, not both")
	}
	// Everything below is checked before any compute or output.
	plan := bake.Plan{
		NMLPs: int(f.nMLPs), Split: f.split, Config: f.config,
		Spec: bakeapi.Spec{Width: int(f.width), Depth: int(f.depth), NSamples: f.nSamples,
			Sampler: bakeapi.Sampler(f.sampler), ChunkSize: int(f.chunk)},
	}
	if plan.Spec.Sampler == bakeapi.SamplerNumpy {
		plan.Spec.Dot = bakeapi.DotProduct(f.dot)
	}
	if err := plan.ValidateSettings(); err != nil {
		return cmdline.Usage(bakeapi.Rename(err, flagOf))
	}
	if err := dataset.CheckOutputFree(f.output); err != nil {
		return err
	}
	n := plan.NMLPs
	rng := bakeapi.Range{Start: 0, End: n}
	var err error
	switch {
	case f.slice != "":
		rng, err = bake.ParseSlice(f.slice, n)
	case f.mlpRange != "":
		rng, err = bake.ParseMLPRange(f.mlpRange, n)
	}
	if err != nil {
		return err
	}
	sf, err := loadSeeds(cmd, f, n)
	if err != nil {
		return err
	}
	plan.Range, plan.Seeds = rng, sf
	if err := plan.Validate(); err != nil {
		return bakeapi.Rename(err, flagOf)
	}
	device := f.device
	if device == gpuengine.DeviceAuto && !gpuengine.DefaultRates.PreferGPU(int(f.width), int(f.depth), int64(rng.Len()), f.nSamples, int(f.threads)) {
		device = gpuengine.DeviceCPU // too little work to repay the GPU's start-up (gpuengine/cost.go)
	}
	eng, err := gpuengine.Open(device, plan.Spec.Sampler)
	if err != nil {
		return err
	}
	if sf.Generated && rng.Len() != n {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: baking a slice with generated seeds; other slices must use the same seeds (pass --mlp-seeds or the same --seed) or merge will refuse them")
	}
	fmt.Fprintf(out, "Baking %d of %d MLPs (width=%d, depth=%d, n_samples=%d, sampler=%s) → %s\n",
		rng.Len(), n, f.width, f.depth, f.nSamples, f.sampler, f.output)
	start := time.Now()
	bar := newProgress(cmd.ErrOrStderr(), "Sampling ground truth", int64(rng.Len())*f.nSamples)
	rows, err := bake.Rows(cmd.Context(), eng, plan.Spec, bake.Identities(sf.Seeds), rng, int(f.threads), bar.Add)
	bar.Finish()
	if err != nil {
		return err
	}
	md := bake.Metadata(plan, eng.Describe(), time.Now())
	if err := dataset.WriteDir(f.output, md, plan.Spec, rows); err != nil {
		return err
	}
	fmt.Fprintf(out, "✓ Wrote %s in %s (%s)\n", f.output, formatDuration(time.Since(start)), formatBytes(dirSize(f.output)))
	if rng.Len() != n {
		fmt.Fprintf(out, "tip: this is a partial (MLPs [%d, %d) of %d); merge all slices with `whestbake dataset merge <partials> --output <dir>`\n", rng.Start, rng.End, n)
	}
	return nil
}

// loadSeeds reads --mlp-seeds, derives from --seed, or draws from OS entropy.
func loadSeeds(cmd *cobra.Command, f bakeFlags, n int) (bake.SeedFile, error) {
	if f.seedsFile != "" {
		data, err := os.ReadFile(f.seedsFile)
		if err != nil {
			return bake.SeedFile{}, fmt.Errorf("cannot read --mlp-seeds file: %v", err)
		}
		return bake.ParseSeeds(f.seedsFile, data, n)
	}
	var sp *uint64
	if cmd.Flags().Changed("seed") {
		if f.seed < 0 {
			return bake.SeedFile{}, fmt.Errorf("--seed must be a non-negative integer, got %d", f.seed)
		}
		u := uint64(f.seed)
		sp = &u
	}
	list, err := seeds.GenerateInputSeeds(n, sp)
	if err != nil {
		return bake.SeedFile{}, err
	}
	sf := bake.FromSeeds(list)
	sf.Generated = sp == nil
	return sf, nil
}

// flagOf names a bakeapi field as the flag that sets it: the flags are named
// like the fields.
func flagOf(field string) string { return "--" + field }
