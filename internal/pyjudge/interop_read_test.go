package pyjudge

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// whestbake reads what whestbench wrote: its bake of the default config,
// its bake of a holdout config, its merge of its partials and its combine
// of the two bakes (single-split and, without prepared trees, multi-split:
// TestWhestbakeReadsWhestbenchPreparedTrees has the rest). Each is read
// back by inspect, verify, compare, info and report (readsBack), and
// whestbake's merge and combine of whestbench's partials and splits write
// what whestbench's write of them.
func TestWhestbakeReadsWhestbenchDatasets(t *testing.T) {
	env := Need(t)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	pubSeeds, holdSeeds := seedsFile(t, dir, 5, 41), seedsFile(t, dir, 4, 42)
	got := judge(t, env,
		whestJob(bakeArgs(5, pubSeeds, "public", "default", at("pub"))...),
		whestJob(bakeArgs(4, holdSeeds, "holdout", "holdout", at("hold"))...),
		whestJob(bakeArgs(5, pubSeeds, "public", "default", at("part1"), "--slice", "1/2")...),
		whestJob(bakeArgs(5, pubSeeds, "public", "default", at("part0"), "--slice", "0/2")...),
		whestJob("dataset", "merge", at("part1"), at("part0"), "--output", at("merged")),
		whestJob("dataset", "combine-splits", at("pub"), at("hold"), "--skip-prepared-arrow",
			"--output", at("combined")),
		whestJob("dataset", "info", at("pub")),
		whestJob("dataset", "info", at("hold")),
		whestJob("dataset", "info", at("merged")),
		whestJob("dataset", "info", at("combined")),
	)
	for i, a := range got[:6] {
		whestOK(t, a, []string{"bake", "bake", "bake", "bake", "merge", "combine-splits"}[i])
	}
	whestbake(t, bakeArgs(5, pubSeeds, "public", "default", at("twin-pub"), "--sampler", "numpy")...)
	whestbake(t, bakeArgs(4, holdSeeds, "holdout", "holdout", at("twin-hold"),
		"--sampler", "numpy")...)
	whestbake(t, "dataset", "combine-splits", "--skip-prepared-arrow", "--output",
		at("twin-combined"), at("twin-pub"), at("twin-hold"))
	for i, c := range []struct{ name, twin string }{
		{"pub", "twin-pub"}, {"hold", "twin-hold"}, {"merged", "twin-pub"},
		{"combined", "twin-combined"},
	} {
		t.Run("reads whest's "+c.name, func(t *testing.T) {
			readsBack(t, at(c.name), at(c.twin), whestOK(t, got[6+i], "dataset info"))
		})
	}
	t.Run("merges whest's partials", func(t *testing.T) {
		whestbake(t, "dataset", "merge", "--output", at("our-merge"), at("part0"), at("part1"))
		theirs := ourRows(t, at("merged"))["public"]
		sameRows(t, "whestbake's merge", ourRows(t, at("our-merge"))["public"], theirs)
		// whestbench's sampling_budget_breakdown holds the bake's wall times
		// (dataset.py create_dataset stores flopscope's budget summary), so
		// its sliced bake matches its unsliced one in every other column.
		sameRows(t, "whest's merge against its unsliced bake",
			without(theirs, "sampling_budget_breakdown"),
			without(ourRows(t, at("pub"))["public"], "sampling_budget_breakdown"))
		mergeDiffsExplained(t, readMetadata(t, at("merged")), readMetadata(t, at("our-merge")), 2, 5)
		if o, w := cardConfigs(t, at("our-merge")), cardConfigs(t, at("merged")); !reflect.DeepEqual(o, w) {
			t.Errorf("card configs: whestbake's merge %v, whest's %v", o, w)
		}
	})
	t.Run("combines whest's splits", func(t *testing.T) {
		whestbake(t, "dataset", "combine-splits", "--skip-prepared-arrow", "--output",
			at("our-combine"), at("pub"), at("hold"))
		for _, s := range []struct{ in, split string }{{"pub", "public"}, {"hold", "holdout"}} {
			name := filepath.Join("data", s.split+"-00000-of-00001.parquet")
			sameFile(t, filepath.Join(at("our-combine"), name), filepath.Join(at(s.in), name))
		}
		combineDiffsExplained(t, readMetadata(t, at("combined")), readMetadata(t, at("our-combine")))
		if o, w := cardConfigs(t, at("our-combine")), cardConfigs(t, at("combined")); !reflect.DeepEqual(o, w) {
			t.Errorf("card configs: whestbake's combine %v, whest's %v", o, w)
		}
	})
}

// readsBack runs whestbake's reading verbs on dir, which whestbench
// wrote: inspect accepts it; verify --k 3 recomputes every MLP it picks
// bit for bit (whestbench's backend is whestbake's numpy sampler);
// compare --mode exact finds it identical to twin, whestbake's numpy bake
// of the same seeds; info prints every line whest's info printed
// (whestInfo), in order, and besides them only the lines
// docs/WHESTBENCH.md names; report draws a copy of it.
func readsBack(t *testing.T, dir, twin, whestInfo string) {
	t.Helper()
	whestbake(t, "dataset", "inspect", dir)
	var verified struct {
		OK     bool
		Splits []struct {
			Name   string
			Checks []struct {
				OK         bool
				Statistics string
			}
		}
	}
	if err := json.Unmarshal([]byte(whestbake(t, "dataset", "verify", "--k", "3", "--json", dir)),
		&verified); err != nil {
		t.Fatal(err)
	}
	for _, s := range verified.Splits {
		for i, c := range s.Checks {
			if !c.OK || c.Statistics != "bit-exact" {
				t.Errorf("verify %s: split %s check %d: ok %v, statistics %q",
					dir, s.Name, i, c.OK, c.Statistics)
			}
		}
		if len(s.Checks) == 0 {
			t.Errorf("verify %s: split %s checked no MLP", dir, s.Name)
		}
	}
	if !verified.OK || len(verified.Splits) == 0 {
		t.Errorf("verify %s: ok %v over %d splits", dir, verified.OK, len(verified.Splits))
	}
	var compared struct {
		Mode string
		Same bool
	}
	out := whestbake(t, "dataset", "compare", "--mode", "exact", "--json", dir, twin)
	if err := json.Unmarshal([]byte(out), &compared); err != nil || !compared.Same {
		t.Errorf("compare --mode exact %s %s: %v\n%s", dir, twin, err, out)
	}
	ours := infoLines(whestbake(t, "dataset", "info", dir))
	extra := regexp.MustCompile(`^(sampler|algorithm_version|prepared_splits): `)
	rest := ours
	for _, line := range infoLines(whestInfo) {
		i := slices.Index(rest, line)
		if i < 0 {
			t.Errorf("whestbake dataset info %s lacks whest's line %q in its place:\n%s",
				dir, line, strings.Join(ours, "\n"))
			return
		}
		for _, l := range rest[:i] {
			if !extra.MatchString(l) {
				t.Errorf("whestbake dataset info %s prints %q, which whest's does not", dir, l)
			}
		}
		rest = rest[i+1:]
	}
	drawn := filepath.Join(t.TempDir(), "drawn")
	copyTree(t, dir, drawn)
	whestbake(t, "dataset", "report", drawn)
}

// without is rows without the column col.
func without(rows []any, col string) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		m := maps.Clone(r.(map[string]any))
		delete(m, col)
		out[i] = m
	}
	return out
}

// infoLines are the lines `whest dataset info` and `whestbake dataset
// info` print, trimmed of their indent.
func infoLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// compare's default mode reads whestbench's record of what computed a
// split where whestbench keeps it: its combine-splits drops each split's
// sampler (dataset_io.py combine_split_datasets copies no provenance into
// the splits entries) and keeps the inputs' common backend at the top.
// whestbench's combine of whestbake's philox splits (backend whestbake)
// and its combine of its own bakes of the same seeds (backend flopscope)
// hold different samples, so compare must judge them statistically and
// call them equivalent, not compare their bits and call them different.
func TestCompareTakesWhestbenchsTopLevelBackend(t *testing.T) {
	env := Need(t)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	pubSeeds, miniSeeds := seedsFile(t, dir, 3, 51), seedsFile(t, dir, 2, 52)
	whestbake(t, bakeArgs(3, pubSeeds, "public", "default", at("ours-pub"))...)
	whestbake(t, bakeArgs(2, miniSeeds, "mini", "default", at("ours-mini"))...)
	got := judge(t, env,
		whestJob(bakeArgs(3, pubSeeds, "public", "default", at("whest-pub"))...),
		whestJob(bakeArgs(2, miniSeeds, "mini", "default", at("whest-mini"))...),
		whestJob("dataset", "combine-splits", "--skip-prepared-arrow", "--output", at("philox"),
			at("ours-pub"), at("ours-mini")),
		whestJob("dataset", "combine-splits", "--skip-prepared-arrow", "--output", at("flopscope"),
			at("whest-pub"), at("whest-mini")),
	)
	for i, a := range got {
		whestOK(t, a, []string{"bake", "bake", "combine-splits", "combine-splits"}[i])
	}
	out, errs, code := whestbakeRun("dataset", "compare", "--json", at("philox"), at("flopscope"))
	var r struct {
		Mode       string
		ModeReason string `json:"mode_reason"`
		Same       bool
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("compare: exit %d %v\n%s%s", code, err, out, errs)
	}
	if code != 0 || r.Mode != "stat" || !r.Same {
		t.Errorf("compare of whest's combines of a philox and a flopscope bake: exit %d, "+
			"mode %s (%s), same %v; want exit 0, mode stat, same", code, r.Mode, r.ModeReason, r.Same)
	}
}

// whestbake reads the multi-split datasets whestbench writes with its
// prepared trees (datasets.save_to_disk's, dataset_io.py
// write_prepared_arrow_split): its combine of its own bakes, its
// prepare-arrow of its combine and of whestbake's, each read back by
// inspect, verify, compare, info and report (readsBack); whestbake's
// prepare-arrow replaces such a tree with its own, which inspect accepts.
func TestWhestbakeReadsWhestbenchPreparedTrees(t *testing.T) {
	env := Need(t)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	pubSeeds, holdSeeds := seedsFile(t, dir, 4, 61), seedsFile(t, dir, 3, 62)
	whestbake(t, bakeArgs(4, pubSeeds, "public", "default", at("twin-pub"), "--sampler", "numpy")...)
	whestbake(t, bakeArgs(3, holdSeeds, "holdout", "holdout", at("twin-hold"),
		"--sampler", "numpy")...)
	whestbake(t, "dataset", "combine-splits", "--skip-prepared-arrow", "--output", at("twin"),
		at("twin-pub"), at("twin-hold"))
	copyTree(t, at("twin"), at("ours-prepared-by-whest"))
	got := judge(t, env,
		whestJob(bakeArgs(4, pubSeeds, "public", "default", at("pub"))...),
		whestJob(bakeArgs(3, holdSeeds, "holdout", "holdout", at("hold"))...),
		whestJob("dataset", "combine-splits", "--output", at("combined"), at("pub"), at("hold")),
		whestJob("dataset", "combine-splits", "--skip-prepared-arrow", "--output",
			at("prepared-later"), at("pub"), at("hold")),
		whestJob("dataset", "prepare-arrow", at("prepared-later")),
		whestJob("dataset", "prepare-arrow", at("ours-prepared-by-whest")),
		whestJob("dataset", "info", at("combined")),
		whestJob("dataset", "info", at("prepared-later")),
		whestJob("dataset", "info", at("ours-prepared-by-whest")),
	)
	for i, a := range got[:6] {
		whestOK(t, a, []string{"bake", "bake", "combine-splits", "combine-splits",
			"prepare-arrow", "prepare-arrow"}[i])
	}
	for i, name := range []string{"combined", "prepared-later", "ours-prepared-by-whest"} {
		t.Run("reads "+name, func(t *testing.T) {
			readsBack(t, at(name), at("twin"), whestOK(t, got[6+i], "dataset info"))
		})
	}
	t.Run("prepare-arrow replaces whest's tree", func(t *testing.T) {
		copyTree(t, at("combined"), at("replaced"))
		whestbake(t, "dataset", "prepare-arrow", at("replaced"))
		whestbake(t, "dataset", "inspect", at("replaced"))
		copyTree(t, at("twin"), at("twin-prepared"))
		whestbake(t, "dataset", "prepare-arrow", at("twin-prepared"))
		for _, s := range []string{"public", "holdout"} {
			name := filepath.Join("prepared", s, "dataset_info.json")
			sameFile(t, filepath.Join(at("replaced"), name), filepath.Join(at("twin-prepared"), name))
		}
	})
}
