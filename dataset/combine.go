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

// Keys every combined input must share with the first: whestbench's, from
// combine_split_datasets in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py,
// and ours, since splits baked with different samplers or algorithms are not
// the same benchmark.
var combineCommonKeys = []string{
	"schema_version", "format", "backend", "n_samples", "width", "depth",
	"seed_protocol", "sampler", "algorithm_version",
}

// Per-split provenance copied from each input into its splits entry.
var combineProvenanceKeys = []string{
	"sampler", "engine", "algorithm_version", "dot_product", "seed_file_sha256",
	"device", "driver", "partials_count",
}

// Combine joins complete single-split datasets into one multi-split dataset out,
// as whestbench's combine_split_datasets does. Each input's parquet files are copied
// byte-for-byte after every row has been checked. defaultSplit, when not empty,
// must name one of the splits; otherwise the one input whose config is
// "default", if exactly one is, becomes the default split.
//
// As whestbench's does, Combine also writes the prepared Arrow tree and
// records it as prepared_splits, unless CombineSkipPrepared. The tree is
// prepared/<split>/ in save_to_disk's layout, which whestbench's loader
// prefers to the parquet files.
func Combine(inputs []string, out string, defaultSplit string, opts ...CombineOption) error {
	return combine(inputs, out, defaultSplit, openCombineInput, writeCombined, opts)
}

// CombineMade is Combine for splits whose rows were read, and whose files
// written, where each was merged. A bake's MergeSplit leaves its parquet
// shards and prepared folder in S3, with a report's statistics of its rows.
// Each input is a folder that holds the split's metadata.json alone,
// checked as Combine checks its inputs' metadata. out gets the combined
// metadata.json, with prepared_splits unless CombineSkipPrepared, and card, and
// what CombineFinish adds; no row is read. The files a Combine of the same
// splits would write besides are the ones the merges wrote.
func CombineMade(inputs []string, out string, defaultSplit string, opts ...CombineOption) error {
	return combine(inputs, out, defaultSplit, openMadeInput, writeMade, opts)
}

// combine is Combine with its inputs opened by open and the staged output
// filled by write.
func combine(
	inputs []string,
	out, defaultSplit string,
	open func(dir string) (combineInput, error),
	write func(tmp string, ins []combineInput, mdBytes []byte, card string, cfg combineConfig) error,
	opts []CombineOption,
) error {
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
	ins, seen, err := openCombineInputs(inputs, open)
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
		return write(tmp, ins, mdBytes, card, cfg)
	})
}

// combineInput is one checked input of Combine: its single split and the
// parquet files that hold it.
type combineInput struct {
	dir   string
	dd    *Dir
	md    Metadata
	info  *Info
	split *SplitInfo
	files []string
}

// openCombineInputs opens and checks every input, in order, and returns them
// with the input directory of each split name.
func openCombineInputs(
	inputs []string,
	open func(dir string) (combineInput, error),
) ([]combineInput, map[string]string, error) {
	var ins []combineInput
	seen := map[string]string{}
	for _, d := range inputs {
		in, err := open(d)
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
	in, err := checkCombineInput(d, dd.Meta, dd.Info)
	in.dd, in.files = dd, dd.Splits[0].Files
	return in, err
}

// openMadeInput opens an input of CombineMade: a folder holding a
// complete split's metadata.json, which must name its shape.
func openMadeInput(d string) (combineInput, error) {
	md, err := ReadMetadata(d)
	if err != nil {
		return combineInput{}, err
	}
	path := filepath.Join(d, MetadataFile)
	info, err := ParseInfo(md, true)
	if err != nil {
		return combineInput{}, invalidf("%s: %v", path, err)
	}
	if info.Width <= 0 || info.Depth <= 0 {
		return combineInput{}, invalidf("%s: width and depth are missing; "+
			"the split's shape must be known without its rows", path)
	}
	return checkCombineInput(d, md, info)
}

// checkCombineInput checks what Combine needs of an input's metadata: a
// complete single split, loadable, dated.
func checkCombineInput(d string, md Metadata, info *Info) (combineInput, error) {
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
	return combineInput{dir: d, md: md, info: info, split: &info.Splits[0]}, nil
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
// and the default split: the one "default" config when none was asked for.
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

// writeCombined fills the staging directory tmp: for each input, its rows
// read once, as scanInput does, and then its parquet files copied; the
// metadata and card; then whatever cfg.finish adds.
func writeCombined(
	tmp string,
	ins []combineInput,
	mdBytes []byte,
	card string,
	cfg combineConfig,
) error {
	if err := os.Mkdir(filepath.Join(tmp, DataDir), 0o755); err != nil {
		return err
	}
	if !cfg.skipPrepared {
		if err := os.Mkdir(filepath.Join(tmp, PreparedDir), 0o755); err != nil {
			return err
		}
	}
	for _, in := range ins {
		// Every row is decoded and checked before its file is copied blind.
		if err := scanInput(tmp, in, cfg); err != nil {
			return err
		}
		for _, f := range in.files {
			if err := copyFile(f, filepath.Join(tmp, DataDir, filepath.Base(f))); err != nil {
				return err
			}
		}
	}
	return writeMade(tmp, ins, mdBytes, card, cfg)
}

// writeMade fills the staging directory tmp with the metadata and card,
// then whatever cfg.finish adds: all of CombineMade's output, and the end
// of Combine's.
func writeMade(tmp string, _ []combineInput, mdBytes []byte, card string, cfg combineConfig) error {
	if err := staging.WriteNew(filepath.Join(tmp, MetadataFile), mdBytes); err != nil {
		return err
	}
	if err := staging.WriteNew(filepath.Join(tmp, readmeFile), []byte(card)); err != nil {
		return err
	}
	if cfg.finish != nil {
		return cfg.finish(tmp)
	}
	return nil
}

// scanInput reads in's rows once: each is checked, written to its split's
// prepared folder under tmp unless cfg.skipPrepared, and handed to
// cfg.eachRow.
func scanInput(tmp string, in combineInput, cfg combineConfig) error {
	name := in.split.Name
	var w *prepared.SplitWriter
	if !cfg.skipPrepared {
		sd := &in.dd.Splits[0]
		var err error
		w, err = prepared.NewSplitWriter(filepath.Join(tmp, PreparedDir, name), name,
			sd.Width, sd.Depth, in.split.NMLPs, nil)
		if err != nil {
			return err
		}
	}
	err := in.dd.Scan(func(_ *SplitData, r Row) error {
		if w != nil {
			if err := w.Write(&r); err != nil {
				return err
			}
		}
		if cfg.eachRow != nil {
			return cfg.eachRow(name, r)
		}
		return nil
	})
	if w == nil {
		return err
	}
	if err != nil {
		w.Abort() // the caller removes the half-written tree
		return err
	}
	return w.Close()
}

// CombineOption adjusts Combine.
type CombineOption func(*combineConfig)

type combineConfig struct {
	finish       func(dir string) error
	skipPrepared bool
	eachRow      func(split string, r Row) error
}

// CombineEachRow hands every row of every input to f, in order, split by
// split, as Combine reads it, once: a caller that needs the rows, as the
// report does, reads them with the combine instead of after it. r is
// reused for the next row. An error of f fails the combine.
func CombineEachRow(f func(split string, r Row) error) CombineOption {
	return func(c *combineConfig) { c.eachRow = f }
}

// CombineSkipPrepared leaves out the prepared Arrow tree and the
// prepared_splits key, as whestbench's --skip-prepared-arrow does:
// whestbench's loader then reads the parquet files.
func CombineSkipPrepared() CombineOption {
	return func(c *combineConfig) { c.skipPrepared = true }
}

// CombineFinish runs finish on the combined dataset while it is still
// staged, a complete dataset directory under a temporary name, so that out
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
