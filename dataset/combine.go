package dataset

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/whestbake/whestbake/dataset/internal/prepared"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/staging"
)

// Keys every combined input must share with the first (whestbench's
// combine_split_datasets in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py,
// plus ours: splits baked with different samplers or algorithms are not the
// same benchmark).
var combineCommonKeys = []string{
	"schema_version", "format", "backend", "n_samples", "width", "depth",
	"seed_protocol", "sampler", "algorithm_version",
}

// Per-split provenance copied from each input into its splits entry.
var combineProvenanceKeys = []string{
	"sampler", "engine", "algorithm_version", "dot_product", "seed_file_sha256",
	"device", "driver", "partials_count",
}

// Combine joins complete single-split datasets into one multi-split dataset out
// (whestbench's combine_split_datasets). Each input's parquet files are copied
// byte-for-byte after every row has been checked. defaultSplit, when not empty,
// must name one of the splits; otherwise the one input whose config is
// "default", if exactly one is, becomes the default split.
//
// As whestbench's does, Combine also writes the prepared Arrow tree
// (prepared/<split>/, save_to_disk's layout, which whestbench's loader
// prefers to the parquet files) and records it as prepared_splits, unless
// CombineSkipPrepared.
func Combine(inputs []string, out string, defaultSplit string, opts ...CombineOption) error {
	var cfg combineConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := CheckOutputFree(out); err != nil {
		return err
	}
	if len(inputs) == 0 {
		return incompatiblef("combine-splits requires at least one input directory; " +
			"pass complete single-split datasets")
	}
	ins, seen, err := openCombineInputs(inputs)
	if err != nil {
		return err
	}
	if err := checkDefaultSplit(defaultSplit, seen); err != nil {
		return err
	}
	if err := checkCommonKeys(ins); err != nil {
		return err
	}
	md := combinedMetadata(ins, defaultSplit, cfg.skipPrepared)
	info, err := ParseInfo(md, false)
	if err != nil {
		return err
	}
	if err := info.CheckLoadable(); err != nil {
		return err
	}
	card := renderCard(info)
	mdBytes, err := encodeMetadata(md)
	if err != nil {
		return err
	}
	return writeStaged(out, func(tmp string) error {
		return writeCombined(tmp, ins, mdBytes, card, cfg)
	})
}

// combineInput is one checked input of Combine: its single split and the
// parquet files that hold it.
type combineInput struct {
	dir   string
	md    Metadata
	info  *Info
	split *SplitInfo
	files []string
}

// openCombineInputs opens and checks every input, in order, and returns them
// with the input directory of each split name.
func openCombineInputs(inputs []string) ([]combineInput, map[string]string, error) {
	var ins []combineInput
	seen := map[string]string{}
	for _, d := range inputs {
		in, err := openCombineInput(d)
		if err != nil {
			return nil, nil, err
		}
		if other, dup := seen[in.split.Name]; dup {
			return nil, nil, incompatiblef("duplicate split name %q across inputs %s and %s; "+
				"each input must contribute a distinct split", in.split.Name, other, d)
		}
		seen[in.split.Name] = d
		ins = append(ins, in)
	}
	return ins, seen, nil
}

func openCombineInput(d string) (combineInput, error) {
	dd, err := Open(d, true)
	if err != nil {
		return combineInput{}, err
	}
	md, info := dd.Meta, dd.Info
	// Before the rows are read: a name that cannot load ends the combine.
	if err := info.CheckLoadable(); err != nil {
		return combineInput{}, fmt.Errorf("%s: %w", d, err)
	}
	if info.IsPartial {
		return combineInput{}, incompatiblef("%s: is a partial dataset; "+
			"combine-splits requires complete single-split inputs. "+
			"Run `whestbake dataset merge` first.", d)
	}
	if info.MultiSplit {
		return combineInput{}, incompatiblef("%s: is already a multi-split dataset; "+
			"combine-splits only accepts single-split inputs", d)
	}
	if info.CreatedAt == "" {
		return combineInput{}, invalidf("%s: created_at_utc is missing or empty; "+
			"combine needs it to date the combined dataset", filepath.Join(d, MetadataFile))
	}
	// Every row is decoded and checked before its file is copied blind.
	if err := dd.Scan(nil); err != nil {
		return combineInput{}, err
	}
	return combineInput{
		dir:   d,
		md:    md,
		info:  info,
		split: &info.Splits[0],
		files: dd.Splits[0].Files,
	}, nil
}

// checkDefaultSplit refuses a requested default split that no input holds.
func checkDefaultSplit(defaultSplit string, seen map[string]string) error {
	if defaultSplit == "" {
		return nil
	}
	if _, ok := seen[defaultSplit]; ok {
		return nil
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return incompatiblef("default_split=%q is not one of the input splits %q", defaultSplit, names)
}

// checkCommonKeys refuses inputs that differ from the first in any of
// combineCommonKeys.
func checkCommonKeys(ins []combineInput) error {
	first := ins[0]
	for _, in := range ins[1:] {
		for _, k := range combineCommonKeys {
			a, _ := in.md.Get(k)
			b, _ := first.md.Get(k)
			if !pyjson.Equal(a, b) {
				return incompatiblef("%s: %s=%s != %s (from %s); "+
					"splits of one dataset must share it",
					in.dir, k, shownValue(k, a), shownValue(k, b), first.dir)
			}
		}
	}
	return nil
}

// combinedMetadata builds the combined dataset's metadata: the shared keys
// from the first input, a splits entry per input, the earliest creation time,
// and the default split (the one "default" config when none was asked for).
func combinedMetadata(ins []combineInput, defaultSplit string, skipPrepared bool) *Object {
	md := NewObject()
	first := ins[0]
	for _, k := range []string{
		"schema_version", "format", "backend", "seed_protocol", "n_samples", "width", "depth",
	} {
		if v, ok := first.md.Get(k); ok {
			md.Set(k, pyjson.CloneValue(v))
		}
	}
	splits := NewObject()
	created := ""
	var defaults []string
	for i, in := range ins {
		c := in.info.CreatedAt
		if i == 0 || c < created {
			created = c
		}
		splits.Set(in.split.Name, combinedSplitEntry(in))
		if in.split.HFConfig() == DefaultConfig {
			defaults = append(defaults, in.split.Name)
		}
	}
	md.Set("created_at_utc", created).
		Set("hardware", HostHardware().Object()).
		Set("splits", splits)
	if defaultSplit == "" && len(defaults) == 1 {
		defaultSplit = defaults[0]
	}
	if defaultSplit != "" {
		md.Set("default_split", defaultSplit)
	}
	if !skipPrepared {
		md.Set("prepared_splits", prepared.SplitsBlock(splits.Keys()))
	}
	return md
}

// combinedSplitEntry is in's entry under splits: its size, date and config,
// and the provenance that the combined dataset's top level cannot hold for
// every split at once.
func combinedSplitEntry(in combineInput) *Object {
	entry := NewObject().
		Set("n_mlps", in.split.NMLPs).
		Set("created_at_utc", in.info.CreatedAt).
		Set("config", in.split.HFConfig())
	if v, ok := in.md.Get("seed"); ok {
		entry.Set("seed", v)
	}
	if v, ok := in.md.Get("hardware_fingerprints"); ok {
		entry.Set("hardware_fingerprints", pyjson.CloneValue(v))
	} else if v, ok := in.md.Get("hardware"); ok {
		entry.Set("hardware_fingerprints", []any{pyjson.CloneValue(v)})
	}
	for _, k := range combineProvenanceKeys {
		if v, ok := in.md.Get(k); ok {
			entry.Set(k, v)
		}
	}
	return entry
}

// writeCombined fills the staging directory tmp: the inputs' parquet files,
// the metadata and card, the prepared tree, then whatever cfg.finish adds.
func writeCombined(
	tmp string,
	ins []combineInput,
	mdBytes []byte,
	card string,
	cfg combineConfig,
) error {
	if err := os.Mkdir(filepath.Join(tmp, dataDir), 0o755); err != nil {
		return err
	}
	for _, in := range ins {
		for _, f := range in.files {
			if err := copyFile(f, filepath.Join(tmp, dataDir, filepath.Base(f))); err != nil {
				return err
			}
		}
	}
	if err := staging.WriteNew(filepath.Join(tmp, MetadataFile), mdBytes); err != nil {
		return err
	}
	if err := staging.WriteNew(filepath.Join(tmp, readmeFile), []byte(card)); err != nil {
		return err
	}
	if !cfg.skipPrepared {
		// From the copies, which are what the dataset holds; the
		// rows are checked a second time on the way.
		d, err := Open(tmp, false)
		if err != nil {
			return err
		}
		if err := writePrepared(d, filepath.Join(tmp, PreparedDir)); err != nil {
			return err
		}
	}
	if cfg.finish != nil {
		return cfg.finish(tmp)
	}
	return nil
}

// CombineOption adjusts Combine.
type CombineOption func(*combineConfig)

type combineConfig struct {
	finish       func(dir string) error
	skipPrepared bool
}

// CombineSkipPrepared leaves out the prepared Arrow tree and the
// prepared_splits key (whestbench's --skip-prepared-arrow): whestbench's
// loader then reads the parquet files.
func CombineSkipPrepared() CombineOption {
	return func(c *combineConfig) { c.skipPrepared = true }
}

// CombineFinish runs finish on the combined dataset while it is still
// staged (a complete dataset directory under a temporary name), so that out
// appears with what finish adds, or, when it fails, not at all.
func CombineFinish(finish func(dir string) error) CombineOption {
	return func(c *combineConfig) { c.finish = finish }
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("dataset: copying %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
