package metadata

import (
	"cmp"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// HFConfig is one config of the card's configs block: its name and the
// splits its data_files list, each as data/<split>-*.parquet.
type HFConfig struct {
	Name   string
	Splits []string
}

// HFConfigs is the configs block HF uses to map configs to data files, as
// whestbench's generate_readme writes it, or nil when HF's directory
// auto-detection is enough. Single split: only a non-default config needs
// one. Multi-split, the first that applies:
//   - per-split configs that actually differ are grouped, "default" first;
//   - with a default_split, "default" holds that split alone and every
//     other split is its own config, so loading one split downloads only
//     its files;
//   - one "default" config lists every split.
func (in *Info) HFConfigs() []HFConfig {
	splits := in.Splits
	if !in.MultiSplit {
		if c := splits[0].Config; c != "" && c != DefaultConfig {
			return []HFConfig{{c, []string{splits[0].Name}}}
		}
		return nil
	}
	declared := map[string]bool{}
	for _, s := range splits {
		if s.Config != "" {
			declared[s.Config] = true
		}
	}
	if len(declared) > 1 {
		var out []HFConfig
		index := map[string]int{}
		for _, s := range splits {
			config := s.HFConfig()
			i, ok := index[config]
			if !ok {
				i = len(out)
				index[config] = i
				out = append(out, HFConfig{Name: config})
			}
			out[i].Splits = append(out[i].Splits, s.Name)
		}
		if i, ok := index[DefaultConfig]; ok {
			def := out[i]
			out = append([]HFConfig{def}, slices.Delete(out, i, i+1)...)
		}
		return out
	}
	if def := in.DefaultSplit; in.Split(def) != nil {
		out := []HFConfig{{DefaultConfig, []string{def}}}
		for _, s := range splits {
			if s.Name != def {
				out = append(out, HFConfig{s.Name, []string{s.Name}})
			}
		}
		return out
	}
	names := make([]string, len(splits))
	for i, s := range splits {
		names[i] = s.Name
	}
	return []HFConfig{{DefaultConfig, names}}
}

// CheckLoadable refuses a dataset that Hugging Face datasets or whestbench
// could not load once published: a split name outside bakeapi.CheckSplitName's
// rule, or a split whose card config would take the name of another, as a
// split named "default" beside a default_split of another name does:
// datasets keeps one config of a name, and the other split would vanish
// from the card. Every verb that makes or publishes a dataset asks it first.
func (in *Info) CheckLoadable() error {
	for _, s := range in.Splits {
		if err := bakeapi.CheckSplitName(s.Name); err != nil {
			return schema.Errorf("split name %v", err)
		}
	}
	seen := map[string]bool{}
	for _, c := range in.HFConfigs() {
		if seen[c.Name] {
			return schema.Errorf("split %q would be the card's config %q, "+
				"which already loads the default split %q: "+
				"rename the split, or make it the default split",
				c.Splits[0], c.Name, in.DefaultSplit)
		}
		seen[c.Name] = true
	}
	return nil
}

// defaultTitle is the card's title of a dataset without a pretty_name.
const defaultTitle = "WhestBench ground truth: random ReLU MLPs"

// Title is the dataset's name as its card shows it: pretty_name, or a
// default.
func (in *Info) Title() string { return cmp.Or(in.PrettyName, defaultTitle) }
