package card

import "github.com/whestbake/whestbake/dataset/internal/metadata"

// configsBlock is info.HFConfigs() as the card's YAML writes it, or nil.
func configsBlock(info *metadata.Info) []any {
	var out []any
	for _, c := range info.HFConfigs() {
		files := make([]any, len(c.Splits))
		for i, n := range c.Splits {
			files[i] = map[string]any{"path": "data/" + n + "-*.parquet", "split": n}
		}
		out = append(out, map[string]any{"config_name": c.Name, "data_files": files})
	}
	return out
}

// splitConfigs is the HF config each split loads under, by split name: the
// config whose data_files list it, or "default" when the card has no
// configs block, since HF then finds every split of data/ in its default config.
// The card's split table and its loading snippets both come from it, so
// they name the configs its front matter declares.
func splitConfigs(info *metadata.Info) map[string]string {
	out := map[string]string{}
	for _, s := range info.Splits {
		out[s.Name] = metadata.DefaultConfig
	}
	for _, c := range info.HFConfigs() {
		for _, s := range c.Splits {
			out[s] = c.Name
		}
	}
	return out
}

// sizeCategory is HF's size_categories label for n rows, never larger than
// whestbench's largest.
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

// challengeURL is the challenge's page on AIcrowd, the card's homepage.
const challengeURL = "https://www.aicrowd.com/challenges/arc-white-box-estimation-challenge-2026"

func cardFrontMatter(info *metadata.Info, total int64) string {
	tags := []any{"whestbench", "alignment", "neural-network-statistics", "benchmark", "white-box"}
	if info.MultiSplit {
		tags = append(tags, "multi-split")
	}
	front := map[string]any{
		"homepage":        challengeURL,
		"language":        []any{"code"},
		"license":         "cc-by-4.0",
		"pretty_name":     info.Title(),
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
