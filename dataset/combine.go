package dataset

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Keys every combined input must share with the first (whestbench's
// combine_split_datasets in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py,
// plus ours: splits baked with different samplers or algorithms are not the
// same benchmark).
var combineCommonKeys = []string{"schema_version", "format", "backend", "n_samples", "width", "depth", "seed_protocol", "sampler", "algorithm_version"}

// Per-split provenance copied from each input into its splits entry.
var combineProvenanceKeys = []string{"sampler", "engine", "algorithm_version", "dot_product", "seed_file_sha256", "device", "driver", "partials_count"}

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
		return incompatiblef("combine-splits requires at least one input directory; pass complete single-split datasets")
	}
	type input struct {
		dir   string
		md    Metadata
		info  *Info
		split *SplitInfo
		files []string
	}
	var ins []input
	seen := map[string]string{}
	for _, d := range inputs {
		dd, err := Open(d, true)
		if err != nil {
			return err
		}
		md, info := dd.Meta, dd.Info
		if info.IsPartial {
			return incompatiblef("%s: is a partial dataset; combine-splits requires complete single-split inputs. Run `whestbake dataset merge` first.", d)
		}
		if info.MultiSplit {
			return incompatiblef("%s: is already a multi-split dataset; combine-splits only accepts single-split inputs", d)
		}
		if info.CreatedAt == "" {
			return invalidf("%s: created_at_utc is missing or empty; combine needs it to date the combined dataset", filepath.Join(d, metadataFile))
		}
		// Every row is decoded and checked before its file is copied blind.
		if err := dd.Scan(nil); err != nil {
			return err
		}
		sd := dd.Splits[0]
		if other, dup := seen[sd.Name]; dup {
			return incompatiblef("duplicate split name %q across inputs %s and %s; each input must contribute a distinct split", sd.Name, other, d)
		}
		seen[sd.Name] = d
		ins = append(ins, input{dir: d, md: md, info: info, split: &info.Splits[0], files: sd.Files})
	}
	if defaultSplit != "" {
		if _, ok := seen[defaultSplit]; !ok {
			names := make([]string, 0, len(seen))
			for n := range seen {
				names = append(names, n)
			}
			sort.Strings(names)
			return incompatiblef("default_split=%q is not one of the input splits %q", defaultSplit, names)
		}
	}
	first := ins[0]
	for _, in := range ins[1:] {
		for _, k := range combineCommonKeys {
			a, _ := in.md.Get(k)
			b, _ := first.md.Get(k)
			if !jsonEqual(a, b) {
				return incompatiblef("%s: %s=%s != %s (from %s); splits of one dataset must share it", in.dir, k, shownValue(k, a), shownValue(k, b), first.dir)
			}
		}
	}

	md := NewObject()
	for _, k := range []string{"schema_version", "format", "backend", "seed_protocol", "n_samples", "width", "depth"} {
		if v, ok := first.md.Get(k); ok {
			md.Set(k, cloneValue(v))
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
		entry := NewObject().
			Set("n_mlps", in.split.NMLPs).
			Set("created_at_utc", c).
			Set("config", in.split.HFConfig())
		if v, ok := in.md.Get("seed"); ok {
			entry.Set("seed", v)
		}
		if v, ok := in.md.Get("hardware_fingerprints"); ok {
			entry.Set("hardware_fingerprints", cloneValue(v))
		} else if v, ok := in.md.Get("hardware"); ok {
			entry.Set("hardware_fingerprints", []any{cloneValue(v)})
		}
		for _, k := range combineProvenanceKeys {
			if v, ok := in.md.Get(k); ok {
				entry.Set(k, v)
			}
		}
		splits.Set(in.split.Name, entry)
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
	if !cfg.skipPrepared {
		md.Set("prepared_splits", preparedSplits(splits.Keys()))
	}
	info, err := ParseInfo(md, false)
	if err != nil {
		return err
	}
	card := renderCard(info)
	mdBytes, err := encodeMetadata(md)
	if err != nil {
		return err
	}
	return writeStaged(out, func(tmp string) error {
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
		if err := writeFileSync(filepath.Join(tmp, metadataFile), mdBytes); err != nil {
			return err
		}
		if err := writeFileSync(filepath.Join(tmp, readmeFile), []byte(card)); err != nil {
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
	})
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
