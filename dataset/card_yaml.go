package dataset

import "cmp"

// configsBlock is the YAML configs list HF uses to map configs to data files
// (whestbench's generate_readme), or nil when HF's directory auto-detection is
// enough. Single split: only a non-default config needs one. Multi-split: (a)
// per-split configs that actually differ are grouped, "default" first; (b) else
// with a default_split, "default" holds that split alone and every other split
// is its own config, so loading one split downloads only its files; (c) else
// one "default" config lists every split.
func configsBlock(info *Info) []any {
	splits := info.Splits
	entry := func(config string, names ...string) map[string]any {
		files := make([]any, len(names))
		for i, n := range names {
			files[i] = map[string]any{"path": "data/" + n + "-*.parquet", "split": n}
		}
		return map[string]any{"config_name": config, "data_files": files}
	}
	if !info.MultiSplit {
		if c := splits[0].Config; c != "" && c != DefaultConfig {
			return []any{entry(c, splits[0].Name)}
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
		var order []string
		members := map[string][]string{}
		for _, s := range splits {
			config := s.HFConfig()
			if _, ok := members[config]; !ok {
				order = append(order, config)
			}
			members[config] = append(members[config], s.Name)
		}
		var out []any
		if _, ok := members[DefaultConfig]; ok {
			out = append(out, entry(DefaultConfig, members[DefaultConfig]...))
		}
		for _, c := range order {
			if c != DefaultConfig {
				out = append(out, entry(c, members[c]...))
			}
		}
		return out
	}
	if def := info.DefaultSplit; info.Split(def) != nil {
		out := []any{entry(DefaultConfig, def)}
		for _, s := range splits {
			if s.Name != def {
				out = append(out, entry(s.Name, s.Name))
			}
		}
		return out
	}
	names := make([]string, len(splits))
	for i, s := range splits {
		names[i] = s.Name
	}
	return []any{entry(DefaultConfig, names...)}
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
	if c := configsBlock(info); c != nil {
		front["configs"] = c
	}
	return "---\n" + yamlDump(front) + "---\n"
}
