package pyjudge

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"testing"
)

// A layout is one dataset directory whestbake wrote, as a reader meets it.
type layout struct {
	name, dir string
	splits    []string // metadata order
	multi     bool
}

// probe is one load of a layout and what it must return.
type probe struct {
	layout *layout
	what   string
	job    job
	check  func(t *testing.T, a answer)
}

// Every loader reads what whestbake wrote, value for value, in each layout
// its verbs make: a single split of the default config, a single split of
// a holdout config (bake --config), two splits under one default config,
// a default split beside a holdout config, and --default-split. The rows
// each returns are the rows whestbake's reader reads, which are pyarrow's:
//
//   - whestbench.load_dataset (dataset.py load_dataset) on the directory,
//     with no split and with each split: with a split, a multi-split
//     dataset comes from its prepared tree (_try_load_prepared_split), and
//     from the parquet files once the tree cannot be read, in a copy whose
//     Arrow files are cut to nothing; its metadata side channel is
//     metadata.json, or the split's merged view of it
//     (_merge_metadata_for_split);
//   - datasets.load_dataset on the directory: each config of the card's
//     front matter, holding exactly its splits, and every load_dataset line
//     of the card's body;
//   - datasets.load_from_disk on each prepared split, under its name.
func TestLoadersReadWhatWhestbakeWrote(t *testing.T) {
	env := Need(t)
	layouts := bakeLayouts(t, t.TempDir())
	var probes []probe
	for i := range layouts {
		probes = append(probes, layoutProbes(t, &layouts[i])...)
	}
	jobs := make([]job, len(probes))
	for i, p := range probes {
		jobs[i] = p.job
	}
	got := judge(t, env, jobs...)
	for i := range layouts {
		t.Run(layouts[i].name, func(t *testing.T) {
			for j, p := range probes {
				if p.layout == &layouts[i] {
					t.Run(p.what, func(t *testing.T) { p.check(t, got[j]) })
				}
			}
		})
	}
}

// bakeLayouts bakes each layout under dir.
func bakeLayouts(t *testing.T, dir string) []layout {
	t.Helper()
	at := func(n string) string { return filepath.Join(dir, n) }
	for i, in := range []struct {
		split, config string
		n             int
	}{{"public", "default", 4}, {"holdout", "holdout", 3}, {"mini", "default", 2}} {
		whestbake(t, bakeArgs(in.n, seedsFile(t, dir, in.n, 70+i), in.split, in.config,
			at(in.split))...)
	}
	combine := func(out string, args ...string) string {
		whestbake(t, append([]string{"dataset", "combine-splits", "--output", at(out)}, args...)...)
		return at(out)
	}
	return []layout{
		{name: "single split", dir: at("public"), splits: []string{"public"}},
		{name: "holdout config", dir: at("holdout"), splits: []string{"holdout"}},
		{name: "one default config", dir: combine("two-default", at("public"), at("mini")),
			splits: []string{"public", "mini"}, multi: true},
		{name: "default and holdout configs", dir: combine("with-holdout", at("public"), at("holdout")),
			splits: []string{"public", "holdout"}, multi: true},
		{name: "default split", dir: combine("default-split", at("public"), at("mini"),
			"--default-split", "mini"), splits: []string{"public", "mini"}, multi: true},
	}
}

// layoutProbes are the loads of l that TestLoadersReadWhatWhestbakeWrote
// makes, each with its check.
func layoutProbes(t *testing.T, l *layout) []probe {
	t.Helper()
	rows := ourRows(t, l.dir)
	md := readMetadata(t, l.dir)
	add := func(ps *[]probe, what string, j job, check func(*testing.T, answer)) {
		*ps = append(*ps, probe{layout: l, what: what, job: j, check: check})
	}
	var ps []probe
	for _, s := range l.splits {
		files, err := filepath.Glob(filepath.Join(l.dir, "data", s+"-*.parquet"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no shards of %s", l.dir, s)
		}
		sort.Strings(files)
		add(&ps, "pyarrow reads "+s, job{"kind": "parquet", "files": files},
			func(t *testing.T, a answer) {
				sameRows(t, "pyarrow", loaded(t, a, "pyarrow").Rows, rows[s])
			})
	}
	add(&ps, "whestbench.load_dataset", loadJob("whestbench", l.dir, "", ""),
		func(t *testing.T, a answer) {
			expectSplits(t, a, rows, l.splits, "cache")
			if !reflect.DeepEqual(a.Metadata, md) {
				t.Errorf("whestbench.metadata is not metadata.json:\n got %v\nwant %v", a.Metadata, md)
			}
		})
	from := map[bool]string{true: "prepared", false: "cache"}[l.multi]
	for _, s := range l.splits {
		add(&ps, "whestbench.load_dataset split "+s, loadJob("whestbench", l.dir, "", s),
			func(t *testing.T, a answer) {
				expectSplits(t, a, rows, []string{s}, from)
				if _, multi := a.Metadata["splits"]; multi || fmt.Sprint(a.Metadata["n_mlps"]) !=
					fmt.Sprint(len(rows[s])) {
					t.Errorf("whestbench.metadata of split %s: %v", s, a.Metadata)
				}
			})
	}
	if l.multi {
		ps = append(ps, preparedProbes(t, l, rows)...)
	}
	return append(ps, cardProbes(t, l, rows)...)
}

// preparedProbes read each prepared split of l with datasets.load_from_disk,
// and with whestbench.load_dataset from a copy of l whose prepared Arrow
// files are empty, which it must read from the parquet files instead.
func preparedProbes(t *testing.T, l *layout, rows map[string][]any) []probe {
	t.Helper()
	broken := l.dir + "-unreadable-tree"
	copyTree(t, l.dir, broken)
	var ps []probe
	for _, s := range l.splits {
		arrow := filepath.Join(broken, "prepared", s, "data-00000-of-00001.arrow")
		if err := os.WriteFile(arrow, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ps = append(ps,
			probe{l, "load_from_disk prepared/" + s,
				loadJob("disk", filepath.Join(l.dir, "prepared", s), "", ""),
				func(t *testing.T, a answer) { expectSplits(t, a, rows, []string{s}, "prepared") }},
			probe{l, "whestbench.load_dataset split " + s + " without its tree",
				loadJob("whestbench", broken, "", s),
				func(t *testing.T, a answer) { expectSplits(t, a, rows, []string{s}, "cache") }})
	}
	return ps
}

// cardProbes load l with datasets as its card says: each config of the
// front matter holds its splits (without a configs block, the directory
// holds them all), and each load_dataset line of the body, which must
// name every split, returns its split.
func cardProbes(t *testing.T, l *layout, rows map[string][]any) []probe {
	t.Helper()
	var ps []probe
	expect := func(splits []string) func(*testing.T, answer) {
		return func(t *testing.T, a answer) { expectSplits(t, a, rows, splits, "cache") }
	}
	if card := cardConfigs(t, l.dir); card == nil {
		ps = append(ps, probe{l, "datasets.load_dataset", loadJob("datasets", l.dir, "", ""),
			expect(l.splits)})
	} else {
		configs := card["configs"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(configs)) {
			splits := slices.Sorted(maps.Keys(configs[name].(map[string]any)))
			ps = append(ps, probe{l, "datasets.load_dataset config " + name,
				loadJob("datasets", l.dir, name, ""), expect(splits)})
		}
	}
	named := map[string]bool{}
	for _, sn := range cardSnippets(t, l.dir) {
		if !slices.Contains(l.splits, sn.split) {
			t.Errorf("%s: the card's %s.load_dataset names split %q, which the dataset lacks",
				l.name, sn.loader, sn.split)
			continue
		}
		if sn.loader == "whestbench" {
			continue // whestbench.load_dataset of every split is probed above
		}
		named[sn.split] = true
		ps = append(ps, probe{l,
			fmt.Sprintf("card line load_dataset(config %q, split %q)", sn.config, sn.split),
			loadJob("datasets", l.dir, sn.config, sn.split), expect([]string{sn.split})})
	}
	for _, s := range l.splits {
		if !named[s] {
			t.Errorf("%s: the card has no datasets.load_dataset line for split %s", l.name, s)
		}
	}
	return ps
}

// snippet is one load_dataset line of a card's body.
type snippet struct{ loader, config, split string }

var snippetLine = regexp.MustCompile(
	`(whestbench|datasets)\.load_dataset\("<your-repo>"(?:, "([a-z0-9-]+)")?, split="([a-z0-9]+)"\)`)

// cardSnippets are the load_dataset calls dir's card tells a reader to make.
func cardSnippets(t *testing.T, dir string) []snippet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	for _, m := range snippetLine.FindAllStringSubmatch(string(b), -1) {
		out = append(out, snippet{loader: m[1], config: m[2], split: m[3]})
	}
	return out
}

// expectSplits fails unless a loader returned exactly the splits names,
// each with its rows of want, read from where (prepared or cache), with
// whestbench's features.
func expectSplits(t *testing.T, a answer, want map[string][]any, names []string, where string) {
	t.Helper()
	a = loaded(t, a, "load")
	var got []string
	for n := range a.Splits {
		got = append(got, n)
	}
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
		t.Fatalf("splits %v, want %v", got, names)
	}
	for _, n := range names {
		s := a.Splits[n]
		sameRows(t, "split "+n, s.Rows, want[n])
		if s.From != where {
			t.Errorf("split %s was read from %s, want %s", n, s.From, where)
		}
		if !s.FeaturesOK {
			t.Errorf("split %s: features are not whestbench's make_features", n)
		}
	}
}
