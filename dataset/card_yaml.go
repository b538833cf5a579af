package dataset

import (
	"cmp"
	"slices"
)

// hfConfig is one config of the card's configs block: its name and the
// splits its data_files list, each as data/<split>-*.parquet.
type hfConfig struct {
	name   string
	splits []string
}

// hfConfigs is the configs block HF uses to map configs to data files
// (whestbench's generate_readme), or nil when HF's directory auto-detection
// is enough. Single split: only a non-default config needs one. Multi-split:
// (a) per-split configs that actually differ are grouped, "default" first;
// (b) else with a default_split, "default" holds that split alone and every
// other split is its own config, so loading one split downloads only its
// files; (c) else one "default" config lists every split.
func hfConfigs(info *Info) []hfConfig {
	splits := info.Splits
	if !info.MultiSplit {
		if c := splits[0].Config; c != "" && c != DefaultConfig {
			return []hfConfig{{c, []string{splits[0].Name}}}
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
		var out []hfConfig
		index := map[string]int{}
		for _, s := range splits {
			config := s.HFConfig()
			i, ok := index[config]
			if !ok {
				i = len(out)
				index[config] = i
				out = append(out, hfConfig{name: config})
			}
			out[i].splits = append(out[i].splits, s.Name)
		}
		if i, ok := index[DefaultConfig]; ok {
			def := out[i]
			out = append([]hfConfig{def}, slices.Delete(out, i, i+1)...)
		}
		return out
	}
	if def := info.DefaultSplit; info.Split(def) != nil {
		out := []hfConfig{{DefaultConfig, []string{def}}}
		for _, s := range splits {
			if s.Name != def {
				out = append(out, hfConfig{s.Name, []string{s.Name}})
			}
		}
		return out
	}
	names := make([]string, len(splits))
	for i, s := range splits {
		names[i] = s.Name
	}
	return []hfConfig{{DefaultConfig, names}}
}

// configsBlock is hfConfigs as the card's YAML writes it, or nil.
func configsBlock(info *Info) []any {
	var out []any
	for _, c := range hfConfigs(info) {
		files := make([]any, len(c.splits))
		for i, n := range c.splits {
			files[i] = map[string]any{"path": "data/" + n + "-*.parquet", "split": n}
		}
		out = append(out, map[string]any{"config_name": c.name, "data_files": files})
	}
	return out
}

// splitConfigs is the HF config each split loads under, by split name: the
// config whose data_files list it, or "default" when the card has no
// configs block (HF then finds every split of data/ in its default config).
// The card's split table and its loading snippets both come from it, so
// they name the configs its front matter declares.
func splitConfigs(info *Info) map[string]string {
	out := map[string]string{}
	for _, s := range info.Splits {
		out[s.Name] = DefaultConfig
	}
	for _, c := range hfConfigs(info) {
		for _, s := range c.splits {
			out[s] = c.name
		}
	}
	return out
}

// sizeCategory is HF's size_categories label for n rows (never larger than
// whestbench's largest).
func sizeCategory(n int64) string {
	switch {
	case n < 1_000:
		return "n<1K"
	case n < 10_000:
		return "1K<n<10K"
	case n < 100_000:
		return "10K<n<100K"
	}
	return "100K<n<1M"
}

const defaultPrettyName = "WhestBench ground truth: random ReLU MLPs"

func prettyName(info *Info) string { return cmp.Or(info.PrettyName, defaultPrettyName) }

func cardFrontMatter(info *Info, total int64) string {
	tags := []any{"whestbench", "alignment", "neural-network-statistics", "benchmark", "white-box"}
	if info.MultiSplit {
		tags = append(tags, "multi-split")
	}
	front := map[string]any{
		"homepage":        "https://www.aicrowd.com/challenges/arc-white-box-estimation-challenge-2026",
		"language":        []any{"code"},
		"license":         "cc-by-4.0",
		"pretty_name":     prettyName(info),
		"repository":      "https://github.com/AIcrowd/whestbench",
		"size_categories": []any{sizeCategory(total)},
		"tags":            tags,
		"task_categories": []any{"other"},
	}
	if c := configsBlock(info); len(c) > 0 {
		front["configs"] = c
	}
	return "---\n" + yamlDump(front) + "---\n"
}
