package dataset

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset/internal/schematest"
	"go.yaml.in/yaml/v3"
)

// hfCard is what Hugging Face datasets reads of a card: its configs, as
// an independent YAML parser decodes the front matter.
type hfCard struct {
	Configs []struct {
		ConfigName any              `yaml:"config_name"`
		DataFiles  []map[string]any `yaml:"data_files"`
	} `yaml:"configs"`
}

// datasetsSplitRE is datasets' _split_re (src/datasets/naming.py). Go's \w
// is ASCII where Python's is Unicode; the names tested here are ASCII.
var datasetsSplitRE = regexp.MustCompile(`^\w+(\.\w+)*$`)

// shardedRE is datasets' SPLIT_PATTERN_SHARDED
// (data/{split}-[0-9]{5}-of-[0-9]{5}*.*, src/datasets/data_files.py), with
// the split taken greedily as string_to_dict takes it.
var shardedRE = regexp.MustCompile(`^data/(.+)-[0-9]{5}-of-[0-9]{5}[^/]*\.[^/]*$`)

// hfLoad is the data files that datasets.load_dataset(repo, config,
// split=split) reads from a repository holding files whose card is
// card ("" config: no name passed), or the error datasets raises, by the
// rules of huggingface/datasets (main, unchanged since 4.0):
//   - utils/metadata.py MetadataConfigs.from_dataset_card_data: configs is
//     a list; each names config_name; _raise_if_data_files_field_not_valid:
//     data_files items are {split, path} dicts whose split matches
//     _split_re; configs are a dict by name, so a second config of a name
//     replaces the first;
//   - get_default_config_name: with no name, the only config, or the one
//     named "default";
//   - data_files.py sanitize_patterns: a split listed twice is an error;
//     without configs, _get_data_files_patterns finds the splits of
//     data/<split>-NNNNN-of-MMMMM.* (every one must match _split_re) in a
//     config named "default";
//   - a split the config does not list is "Unknown split" (arrow_reader.py).
func hfLoad(card string, files []string, config, split string) ([]string, error) {
	var doc hfCard
	if err := yaml.Unmarshal([]byte(card), &doc); err != nil {
		return nil, fmt.Errorf("front matter: %v", err)
	}
	patterns := map[string]map[string]string{} // config → split → path
	if len(doc.Configs) == 0 {
		patterns[DefaultConfig] = map[string]string{}
		for _, f := range files {
			if m := shardedRE.FindStringSubmatch(f); m != nil {
				if !datasetsSplitRE.MatchString(m[1]) {
					return nil, fmt.Errorf("Split name should match %q but got %q",
						datasetsSplitRE, m[1])
				}
				patterns[DefaultConfig][m[1]] = "data/" + m[1] +
					"-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]*.*"
			}
		}
	}
	for _, c := range doc.Configs {
		name, ok := c.ConfigName.(string)
		if !ok {
			return nil, fmt.Errorf("config_name %#v is not a string", c.ConfigName)
		}
		if _, dup := patterns[name]; dup {
			return nil, fmt.Errorf("two configs are named %q: datasets keeps the last", name)
		}
		patterns[name] = map[string]string{}
		for _, item := range c.DataFiles {
			s, sok := item["split"].(string)
			p, pok := item["path"].(string)
			if len(item) != 2 || !sok || !pok || !datasetsSplitRE.MatchString(s) {
				return nil, fmt.Errorf("config %s: data_files item %v is not {split, path} "+
					"with a valid split", name, item)
			}
			if _, dup := patterns[name][s]; dup {
				return nil, fmt.Errorf("Some splits are duplicated in data_files: %s", s)
			}
			patterns[name][s] = p
		}
	}
	if config == "" {
		switch {
		case len(patterns) == 1:
			for c := range patterns {
				config = c
			}
		case patterns[DefaultConfig] != nil:
			config = DefaultConfig
		default:
			return nil, errors.New("Config name is missing")
		}
	}
	splits, ok := patterns[config]
	if !ok {
		return nil, fmt.Errorf("BuilderConfig %q not found", config)
	}
	pattern, ok := splits[split]
	if !ok {
		return nil, fmt.Errorf("Unknown split %q. Should be one of %v",
			split, slices.Sorted(mapKeys(splits)))
	}
	var out []string
	for _, f := range files {
		if ok, _ := path.Match(pattern, f); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("Unable to find %q", pattern)
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var (
	tableRowRE = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([^`]+)` \\| [0-9,]+ \\|$")
	snippetRE  = regexp.MustCompile(`datasets\.load_dataset\("org/repo"` +
		`(?:, "([^"]+)")?, split="([^"]+)"\)`)
)

// Every layout of the card loads: for each split, its row of the split
// table (load_dataset(repo, <config column>, split=S)) and its snippet read
// exactly the split's shards, by datasets' rules for the card's configs.
// With --default-split the table used to say `default` for every split and
// the snippet load_dataset(repo, split="public") failed with Unknown split.
func TestCardConfigsAndSnippetsLoadEverySplit(t *testing.T) {
	for _, c := range []struct{ name, md string }{
		{"single default", `{` + v3Meta + `, "n_mlps": 2, "split": "public", "config": "default"}`},
		{"single no split", `{` + v3Meta + `, "n_mlps": 2}`},
		{"single named config",
			`{` + v3Meta + `, "n_mlps": 2, "split": "mini", "config": "full-v2"}`},
		{"multi legacy", `{` + v3Meta + `, "splits": ` +
			`{"public": {"n_mlps": 1}, "holdout": {"n_mlps": 1}}}`},
		{"multi default_split", `{` + v3Meta + `, "splits": ` +
			`{"public": {"n_mlps": 1, "config": "default"}, ` +
			`"holdout": {"n_mlps": 1, "config": "default"}, "mini": {"n_mlps": 1}}, ` +
			`"default_split": "holdout"}`},
		{"multi default_split first", `{` + v3Meta + `, "splits": ` +
			`{"public": {"n_mlps": 1, "config": "default"}, ` +
			`"holdout": {"n_mlps": 1, "config": "default"}}, "default_split": "public"}`},
		{"multi distinct configs", `{` + v3Meta + `, "splits": ` +
			`{"a": {"n_mlps": 1, "config": "x"}, "b": {"n_mlps": 1, "config": "default"}, ` +
			`"c": {"n_mlps": 1, "config": "x"}, "d": {"n_mlps": 1}}}`},
		{"multi distinct configs, none default", `{` + v3Meta + `, "splits": ` +
			`{"a": {"n_mlps": 1, "config": "x"}, "b": {"n_mlps": 1, "config": "y"}}}`},
		{"multi one shared config", `{` + v3Meta + `, "splits": ` +
			`{"a": {"n_mlps": 1, "config": "x"}, "b": {"n_mlps": 1, "config": "x"}}}`},
		{"multi one shared config, default_split", `{` + v3Meta + `, "splits": ` +
			`{"a": {"n_mlps": 1, "config": "x"}, "b": {"n_mlps": 1, "config": "x"}}, ` +
			`"default_split": "b"}`},
		{"splits that prefix each other", `{` + v3Meta + `, "splits": ` +
			`{"a": {"n_mlps": 1}, "ab": {"n_mlps": 1}, "a1": {"n_mlps": 1}}, ` +
			`"default_split": "ab"}`},
		{"YAML 1.1 words", `{` + v3Meta + `, "splits": ` +
			`{"no": {"n_mlps": 1}, "null": {"n_mlps": 1}, "on": {"n_mlps": 1}}, ` +
			`"default_split": "on"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := mustObj(t, c.md)
			info, err := ParseInfo(md, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := info.CheckLoadable(); err != nil {
				t.Fatalf("CheckLoadable: %v", err)
			}
			card, err := RenderCard(md, CardRepo("org/repo"))
			if err != nil {
				t.Fatal(err)
			}
			// The repository's files: each split's shards (one split in
			// two), its prepared folder, the report, the card.
			files := []string{"README.md", "metadata.json", "report/index.html"}
			shards := map[string][]string{}
			for i, s := range info.Splits {
				n := 1 + i%2
				for k := range n {
					f := fmt.Sprintf("data/%s-%05d-of-%05d.parquet", s.Name, k, n)
					shards[s.Name] = append(shards[s.Name], f)
					files = append(files, f)
				}
				for _, f := range []string{PreparedArrowFile, PreparedInfoFile, PreparedStateFile} {
					files = append(files, path.Join(PreparedDir, s.Name, f))
				}
			}
			front := frontMatter(t, card)
			// PyYAML (YAML 1.1, what the Hub and datasets parse cards
			// with) reads no, null and on unquoted as False, None and
			// True; the parser above is YAML 1.2's, so check the quotes.
			for _, word := range []string{"no", "null", "on"} {
				if info.Split(word) != nil && !strings.Contains(front, "split: '"+word+"'") {
					t.Errorf("split %s is not quoted in the front matter:\n%s", word, front)
				}
			}
			loads := func(what, config, split string) {
				t.Helper()
				got, err := hfLoad(front, files, config, split)
				if err != nil {
					t.Errorf("split %s from %s: %v", split, what, err)
				} else if !slices.Equal(got, shards[split]) {
					t.Errorf("split %s from %s reads %v, want %v", split, what, got, shards[split])
				}
			}
			var tabled, snipped []string
			for _, row := range tableRowRE.FindAllStringSubmatch(card, -1) {
				tabled = append(tabled, row[1])
				loads("the table's config "+row[2], row[2], row[1])
			}
			for _, snip := range snippetRE.FindAllStringSubmatch(card, -1) {
				snipped = append(snipped, snip[2])
				loads("the snippet "+snip[0], snip[1], snip[2])
			}
			var names []string
			for _, s := range info.Splits {
				names = append(names, s.Name)
			}
			if !slices.Equal(tabled, names) || !slices.Equal(snipped, names) {
				t.Errorf("the table lists %v and the snippets load %v, want every split %v",
					tabled, snipped, names)
			}
			// whestbench's own snippet names the default split when there
			// is one, which load_dataset(repo) would give.
			want := info.Splits[0].Name
			if info.DefaultSplit != "" {
				want = info.DefaultSplit
			}
			snippet := fmt.Sprintf(`whestbench.load_dataset("org/repo", split=%q)`, want)
			if !strings.Contains(card, snippet) {
				t.Errorf("the whestbench snippet does not load %s", want)
			}
		})
	}
}

// A split named "default" beside a default split of another name would
// take the card's "default" config, which datasets keeps once: the other
// split would vanish. CheckLoadable refuses it, and refuses every split
// name that datasets or whestbench cannot load, with the rule's fix.
func TestCheckLoadableRefusesWhatCannotLoad(t *testing.T) {
	for _, c := range []struct{ md, want string }{
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 1}, "default": {"n_mlps": 1}}, ` +
			`"default_split": "public"}`,
			`split "default" would be the card's config "default", ` +
				`which already loads the default split "public"`},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 1}, "mini-a": {"n_mlps": 1}}}`,
			`split name "mini-a" cannot be loaded`},
		{`{` + v3Meta + `, "n_mlps": 2, "split": "my-split"}`, `use "mysplit"`},
	} {
		info, err := ParseInfo(mustObj(t, c.md), false)
		if err != nil {
			t.Fatal(err)
		}
		schematest.WantErr[*InvalidDatasetError](t, info.CheckLoadable(), c.want)
	}
	// The default split may be named "default" itself.
	md := mustObj(t, `{`+v3Meta+`, "splits": {"public": {"n_mlps": 1}, "default": {"n_mlps": 1}}, `+
		`"default_split": "default"}`)
	info, err := ParseInfo(md, false)
	if err != nil || info.CheckLoadable() != nil {
		t.Errorf("default split named default: %v %v", err, info.CheckLoadable())
	}
}
