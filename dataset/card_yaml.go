package dataset

import "slices"

// cardSplit is one split as the card sees it.
type cardSplit struct {
	name, config string
	nMLPs        int64
	info         *Object // the split's metadata: md itself for a single split
}

func cardSplits(md Metadata) []cardSplit {
	splits, multi := md.GetObject("splits")
	var out []cardSplit
	for _, name := range splitNames(md) {
		info := md
		if multi {
			info, _ = splits.GetObject(name)
		}
		config, ok := info.GetString("config")
		if !ok {
			config = DefaultConfig
		}
		n, _ := info.GetInt("n_mlps")
		out = append(out, cardSplit{name: name, config: config, nMLPs: n, info: info})
	}
	return out
}

// configsBlock is the YAML configs list HF uses to map configs to data
// files (reference §2.4), or nil when HF's directory auto-detection is
// enough. Single split: only a non-default config needs one. Multi-split:
// (a) per-split configs that actually differ are grouped, "default" first;
// (b) else with a default_split, "default" holds that split alone and every
// other split is its own config, so loading one split downloads only its
// files; (c) else one "default" config lists every split.
func configsBlock(md Metadata, splits []cardSplit) []any {
	entry := func(config string, names ...string) map[string]any {
		files := make([]any, len(names))
		for i, n := range names {
			files[i] = map[string]any{"path": "data/" + n + "-*.parquet", "split": n}
		}
		return map[string]any{"config_name": config, "data_files": files}
	}
	if !md.Has("splits") {
		if c, ok := md.GetString("config"); ok && c != DefaultConfig {
			return []any{entry(c, splits[0].name)}
		}
		return nil
	}
	declared := map[string]bool{}
	for _, s := range splits {
		if _, ok := s.info.GetString("config"); ok {
			declared[s.config] = true
		}
	}
	if len(declared) > 1 {
		var order []string
		members := map[string][]string{}
		for _, s := range splits {
			if _, ok := members[s.config]; !ok {
				order = append(order, s.config)
			}
			members[s.config] = append(members[s.config], s.name)
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
	if def, ok := md.GetString("default_split"); ok && slices.ContainsFunc(splits, func(s cardSplit) bool { return s.name == def }) {
		out := []any{entry(DefaultConfig, def)}
		for _, s := range splits {
			if s.name != def {
				out = append(out, entry(s.name, s.name))
			}
		}
		return out
	}
	names := make([]string, len(splits))
	for i, s := range splits {
		names[i] = s.name
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

func cardFrontMatter(md Metadata, splits []cardSplit, total int64) string {
	tags := []any{"whestbench", "alignment", "neural-network-statistics", "benchmark", "white-box"}
	if md.Has("splits") {
		tags = append(tags, "multi-split")
	}
	pretty, ok := md.GetString("pretty_name")
	if !ok {
		pretty = defaultPrettyName
	}
	front := map[string]any{
		"homepage":        "https://www.aicrowd.com/challenges/arc-white-box-estimation-challenge-2026",
		"language":        []any{"code"},
		"license":         "cc-by-4.0",
		"pretty_name":     pretty,
		"repository":      "https://github.com/AIcrowd/whestbench",
		"size_categories": []any{sizeCategory(total)},
		"tags":            tags,
		"task_categories": []any{"other"},
	}
	if c := configsBlock(md, splits); c != nil {
		front["configs"] = c
	}
	return "---\n" + yamlDump(front) + "---\n"
}
