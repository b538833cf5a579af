package pyjudge

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// whestbench's merge (dataset_io.py merge_datasets, which loads each
// partial with datasets.load_dataset through its card) takes whestbake's
// partials, cut by --slice and by --mlp-range, of the default config under
// seed protocol 3.0 and of a holdout config under 4.0, and writes what
// whestbake's merge writes: the same rows bit for bit, cards whose configs
// mean the same, and metadata that differs only where the two merges are
// meant to (mergeDiffsExplained). `whest dataset info` prints the same for
// both merges.
func TestWhestMergesWhestbakePartials(t *testing.T) {
	env := Need(t)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	seeds := seedsFile(t, dir, 5, 11)
	v4 := []string{"--seed-protocol", "4.0", "--seed-salt", strings.Repeat("5a", 32)}
	sets := []struct {
		split, config string
		cuts          [][]string
	}{
		{"public", "default", [][]string{{"--slice", "1/2"}, {"--slice", "0/2"}}},
		{"holdout", "holdout", [][]string{
			append([]string{"--mlp-range", "3-4"}, v4...),
			append([]string{"--mlp-range", "0-0"}, v4...),
			append([]string{"--mlp-range", "1-2"}, v4...),
		}},
	}
	var jobs []job
	for _, s := range sets {
		var parts []string
		for i, cut := range s.cuts {
			p := at(fmt.Sprintf("%s-part%d", s.split, i))
			whestbake(t, bakeArgs(5, seeds, s.split, s.config, p, cut...)...)
			parts = append(parts, p)
		}
		ours, theirs := at(s.split+"-ours"), at(s.split+"-whest")
		whestbake(t, append([]string{"dataset", "merge", "--output", ours}, parts...)...)
		jobs = append(jobs,
			whestJob(append([]string{"dataset", "merge", "--output", theirs}, parts...)...),
			whestJob("dataset", "info", ours),
			whestJob("dataset", "info", theirs),
			job{"kind": "parquet", "files": []string{
				filepath.Join(theirs, "data", s.split+"-00000-of-00001.parquet")}})
	}
	got := judge(t, env, jobs...)
	for i, s := range sets {
		t.Run(s.split, func(t *testing.T) {
			a := got[4*i : 4*i+4]
			whestOK(t, a[0], "dataset merge of whestbake's partials")
			ours, theirs := at(s.split+"-ours"), at(s.split+"-whest")
			if o, w := whestOK(t, a[1], "dataset info"), whestOK(t, a[2], "dataset info"); o != w {
				t.Errorf("whest dataset info of whestbake's merge:\n%s\nof its own:\n%s", o, w)
			}
			want := ourRows(t, ours)[s.split]
			sameRows(t, "whest's merge, read by pyarrow", loaded(t, a[3], "pyarrow").Rows, want)
			sameRows(t, "whest's merge, read by whestbake", ourRows(t, theirs)[s.split], want)
			mergeDiffsExplained(t, readMetadata(t, theirs), readMetadata(t, ours),
				len(s.cuts), 5)
			if o, w := cardConfigs(t, ours), cardConfigs(t, theirs); !reflect.DeepEqual(o, w) {
				t.Errorf("card configs: whestbake's merge %v, whest's %v", o, w)
			}
		})
	}
}

// mergeDiffsExplained fails unless theirs (whest's merge) and ours
// (whestbake's, of the same partials) differ only in merged_at_utc, the
// time each ran, and in hardware_fingerprints, where each entry of ours
// holds every field of whestbench's (dataset_io.py
// _collapse_hardware_fingerprints) with its value, save mlp_count:
// whestbench counts the partials there, whestbake the MLPs (and the
// partials in partials_count); whestbake adds its own fields (engine,
// go_version, whestbake_version).
func mergeDiffsExplained(t *testing.T, theirs, ours map[string]any, partials, mlps int) {
	t.Helper()
	for _, p := range metadataDiff(theirs, ours) {
		if p != "merged_at_utc" && p != "hardware_fingerprints" {
			t.Errorf("merged metadata.json: %s is %v in whest's merge, %v in whestbake's",
				p, theirs[p], ours[p])
		}
	}
	tf, _ := theirs["hardware_fingerprints"].([]any)
	of, _ := ours["hardware_fingerprints"].([]any)
	if len(tf) != 1 || len(of) != 1 {
		t.Fatalf("hardware_fingerprints: whest's %v, whestbake's %v; want one host group each",
			tf, of)
	}
	tg, og := tf[0].(map[string]any), of[0].(map[string]any)
	for k, v := range tg {
		if k != "mlp_count" && !reflect.DeepEqual(og[k], v) {
			t.Errorf("hardware_fingerprints[0].%s: whest's merge %v, whestbake's %v", k, v, og[k])
		}
	}
	for _, c := range []struct {
		group map[string]any
		key   string
		want  int
	}{{tg, "mlp_count", partials}, {og, "mlp_count", mlps}, {og, "partials_count", partials}} {
		if fmt.Sprint(c.group[c.key]) != fmt.Sprint(c.want) {
			t.Errorf("hardware_fingerprints[0].%s = %v, want %d", c.key, c.group[c.key], c.want)
		}
	}
}

// whestbench's combine-splits (dataset_io.py combine_split_datasets) takes
// whestbake's splits in each layout its flags make, and writes what
// whestbake's combine-splits writes of them: the same parquet files, byte
// for byte; prepared trees that datasets.load_from_disk reads into the
// same rows, under the same split names (or none, with
// --skip-prepared-arrow); cards whose configs mean the same; metadata that
// differs only where combineDiffsExplained says. `whest dataset info` prints
// the same for both.
func TestWhestCombinesWhestbakeSplits(t *testing.T) {
	env := Need(t)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	inputs := map[string]string{}
	for i, in := range []struct {
		split, config string
		n             int
	}{{"public", "default", 5}, {"holdout", "holdout", 4}, {"mini", "default", 3}} {
		inputs[in.split] = at("in-" + in.split)
		whestbake(t, bakeArgs(in.n, seedsFile(t, dir, in.n, 20+i), in.split, in.config,
			inputs[in.split])...)
	}
	cases := []struct {
		name   string
		splits []string
		flags  []string
	}{
		{"one default config", []string{"public", "mini"}, nil},
		{"default split", []string{"public", "mini"}, []string{"--default-split", "mini"}},
		{"holdout config", []string{"public", "holdout"}, nil},
		{"skip prepared arrow", []string{"holdout", "public"}, []string{"--skip-prepared-arrow"}},
	}
	var jobs []job
	for i, c := range cases {
		ours, theirs := at(fmt.Sprintf("ours%d", i)), at(fmt.Sprintf("whest%d", i))
		args := append([]string{"dataset", "combine-splits", "--output"}, ours)
		for _, s := range c.splits {
			args = append(args, inputs[s])
		}
		whestbake(t, append(args, c.flags...)...)
		args[3] = theirs
		jobs = append(jobs, whestJob(append(args, c.flags...)...),
			whestJob("dataset", "info", ours), whestJob("dataset", "info", theirs))
		for _, s := range c.splits {
			jobs = append(jobs, loadJob("disk", filepath.Join(ours, "prepared", s), "", ""),
				loadJob("disk", filepath.Join(theirs, "prepared", s), "", ""))
		}
	}
	got := judge(t, env, jobs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := got[:3+2*len(c.splits)]
			got = got[len(a):]
			ours, theirs := at(fmt.Sprintf("ours%d", i)), at(fmt.Sprintf("whest%d", i))
			whestOK(t, a[0], "dataset combine-splits of whestbake's splits")
			if o, w := whestOK(t, a[1], "dataset info"), whestOK(t, a[2], "dataset info"); o != w {
				t.Errorf("whest dataset info of whestbake's combine:\n%s\nof its own:\n%s", o, w)
			}
			rows := ourRows(t, ours)
			for j, s := range c.splits {
				sameFile(t, filepath.Join(theirs, "data", s+"-00000-of-00001.parquet"),
					filepath.Join(inputs[s], "data", s+"-00000-of-00001.parquet"))
				sameFile(t, filepath.Join(ours, "data", s+"-00000-of-00001.parquet"),
					filepath.Join(inputs[s], "data", s+"-00000-of-00001.parquet"))
				for k, who := range []string{"whestbake's", "whest's"} {
					p := a[3+2*j+k]
					if slices.Contains(c.flags, "--skip-prepared-arrow") {
						if p.Error == "" {
							t.Errorf("%s combine --skip-prepared-arrow wrote prepared/%s", who, s)
						}
						continue
					}
					split := loaded(t, p, who+" prepared/"+s).Splits[s]
					sameRows(t, who+" prepared/"+s+" by load_from_disk", split.Rows, rows[s])
					if !split.FeaturesOK {
						t.Errorf("%s prepared/%s: features are not whestbench's make_features", who, s)
					}
				}
			}
			combineDiffsExplained(t, readMetadata(t, theirs), readMetadata(t, ours))
			if o, w := cardConfigs(t, ours), cardConfigs(t, theirs); !reflect.DeepEqual(o, w) {
				t.Errorf("card configs: whestbake's combine %v, whest's %v", o, w)
			}
		})
	}
}

// combineProvenance are the keys whestbake's combine copies into each
// split's entry from the input's metadata (dataset/combine.go's
// combineProvenanceKeys); whestbench's copies none of them.
var combineProvenance = regexp.MustCompile(
	`^splits\.[a-z0-9]+\.(sampler|engine|algorithm_version|dot_product|seed_file_sha256|` +
		`device|driver|partials_count)$`)

// combineDiffsExplained fails unless theirs (whest's combine) and ours
// (whestbake's, of the same splits) differ only in hardware, the host
// that ran the combine as each program records it
// (hardware.py collect_hardware_fingerprint against whestbake's), and in
// the provenance whestbake keeps per split and whestbench's combine,
// which copies n_mlps, created_at_utc, config, seed and
// hardware_fingerprints alone, drops.
func combineDiffsExplained(t *testing.T, theirs, ours map[string]any) {
	t.Helper()
	for _, p := range metadataDiff(theirs, ours) {
		switch {
		case strings.HasPrefix(p, "hardware."):
		case combineProvenance.MatchString(p) && !has(theirs, p):
		default:
			t.Errorf("combined metadata.json: %s differs between whest's combine and whestbake's", p)
		}
	}
}

// has reports whether md holds the dotted path p.
func has(md map[string]any, p string) bool {
	var v any = md
	for _, k := range strings.Split(p, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = o[k]; !ok {
			return false
		}
	}
	return true
}

// sameFile fails unless got holds want's bytes.
func sameFile(t *testing.T, got, want string) {
	t.Helper()
	g, err1 := os.ReadFile(got)
	w, err2 := os.ReadFile(want)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s is not a copy of %s", got, want)
	}
}

// whestbench's prepare-arrow takes whestbake's multi-split dataset and
// writes, as whestbake's prepare-arrow of a copy does, the same
// metadata.json byte for byte and a tree that datasets.load_from_disk
// reads into the rows of the parquet files. whestbench re-renders the card
// from its own template (cli.py, the prepare-arrow branch), whestbake
// leaves it as it was: their configs mean the same.
func TestWhestPreparesArrowOfAWhestbakeDataset(t *testing.T) {
	env := Need(t)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	whestbake(t, bakeArgs(4, seedsFile(t, dir, 4, 31), "public", "default", at("public"))...)
	whestbake(t, bakeArgs(3, seedsFile(t, dir, 3, 32), "holdout", "holdout", at("holdout"))...)
	whestbake(t, "dataset", "combine-splits", "--skip-prepared-arrow", "--output", at("base"),
		at("public"), at("holdout"))
	copyTree(t, at("base"), at("ours"))
	copyTree(t, at("base"), at("whest"))
	whestbake(t, "dataset", "prepare-arrow", at("ours"))
	jobs := []job{whestJob("dataset", "prepare-arrow", at("whest"))}
	for _, who := range []string{"ours", "whest"} {
		for _, s := range []string{"public", "holdout"} {
			jobs = append(jobs, loadJob("disk", filepath.Join(at(who), "prepared", s), "", ""))
		}
	}
	got := judge(t, env, jobs...)
	whestOK(t, got[0], "dataset prepare-arrow of whestbake's dataset")
	sameFile(t, filepath.Join(at("whest"), "metadata.json"), filepath.Join(at("ours"), "metadata.json"))
	rows := ourRows(t, at("base"))
	for i, a := range got[1:] {
		who, s := []string{"whestbake's", "whest's"}[i/2], []string{"public", "holdout"}[i%2]
		sameRows(t, who+" prepared/"+s, loaded(t, a, who+" prepared/"+s).Splits[s].Rows, rows[s])
	}
	if o, w := cardConfigs(t, at("ours")), cardConfigs(t, at("whest")); !reflect.DeepEqual(o, w) {
		t.Errorf("card configs after prepare-arrow: whestbake's %v, whest's %v", o, w)
	}
	sameFile(t, filepath.Join(at("ours"), "README.md"), filepath.Join(at("base"), "README.md"))
}

// The flags docs/WHESTBENCH.md says whestbench's dataset verbs have are
// the installed whestbench's, as `whest dataset VERB --help` prints them:
// the verb table names no verb and no flag whest lacks and leaves out no
// verb of whest's, and the table of whestbench's flags that whestbake does
// not take (the CLI's own, internal/cli/whestbench.go) holds exactly those
// flags of whest's verbs that the same verb of whestbake lacks.
func TestWhestbenchFlagTablesMatchInstalledWhest(t *testing.T) {
	env := Need(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "WHESTBENCH.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := docVerbTable(t, string(doc))
	docVerbs := slices.Sorted(maps.Keys(named))
	jobs := []job{whestJob("dataset", "--help")}
	for _, v := range docVerbs {
		jobs = append(jobs, whestJob("dataset", v, "--help"))
	}
	got := judge(t, env, jobs...)
	verbs := whestVerbs(t, whestOK(t, got[0], "dataset --help"))
	for _, v := range verbs {
		if _, ok := named[v]; !ok {
			t.Errorf("docs/WHESTBENCH.md's verb table has no row for whest dataset %s", v)
		}
	}
	theirs := map[string][]string{}
	for i, v := range docVerbs {
		if a := got[1+i]; a.Code != 0 || !slices.Contains(verbs, v) {
			t.Errorf("docs/WHESTBENCH.md names whest dataset %s, which whest lacks", v)
			continue
		}
		theirs[v] = helpFlags(got[1+i].Stdout)
		for _, f := range named[v] {
			if !slices.Contains(theirs[v], f) {
				t.Errorf("docs/WHESTBENCH.md: whest dataset %s has no --%s (its flags: %v)",
					v, f, theirs[v])
			}
		}
	}
	var want []string
	for _, v := range verbs {
		out, _, code := whestbakeRun("dataset", v, "--help")
		if code != 0 {
			t.Fatalf("whestbake dataset %s --help: exit %d", v, code)
		}
		ours := helpFlags(out)
		for _, f := range theirs[v] {
			if !slices.Contains(ours, f) {
				want = append(want, v+" --"+f)
			}
		}
	}
	documented := docFlagTable(t, string(doc))
	slices.Sort(want)
	slices.Sort(documented)
	if !slices.Equal(documented, want) {
		t.Errorf("docs/WHESTBENCH.md's table of whestbench's flags that whestbake does not take "+
			"lists %v; whest %s has, and whestbake lacks, %v",
			documented, whestVersion(t, env), want)
	}
}

// whestVerbs are the verbs `whest dataset --help` printed.
func whestVerbs(t *testing.T, help string) []string {
	t.Helper()
	m := regexp.MustCompile(`\{([a-z,-]+)\}`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("whest dataset --help lists no verbs:\n%s", help)
	}
	return strings.Split(m[1], ",")
}

// whestVersion is the installed whestbench's version.
func whestVersion(t *testing.T, env *Env) string {
	t.Helper()
	return strings.TrimSpace(env.PythonOK(t, Cmd{},
		`import importlib.metadata as m; print(m.version("whestbench"))`).Stdout)
}

// helpFlags are the long flags a --help text lists as options (argparse's
// and cobra's: a line indented by two or six spaces that starts with the
// flag, or with -x and then the flag; deeper lines are the help's wrapped
// text), help itself left out.
func helpFlags(help string) []string {
	var out []string
	line := regexp.MustCompile(`(?m)^(?: {2}| {6})(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)`)
	for _, m := range line.FindAllStringSubmatch(help, -1) {
		if m[1] != "help" && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// docVerbTable is the verb table of docs/WHESTBENCH.md: for each `whest
// dataset VERB ...` its first column shows, the flags it names.
func docVerbTable(t *testing.T, doc string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	cell := regexp.MustCompile("(?m)^\\| `whest dataset ([a-z-]+)([^`]*)`")
	flag := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, m := range cell.FindAllStringSubmatch(doc, -1) {
		var flags []string
		for _, f := range flag.FindAllStringSubmatch(m[2], -1) {
			flags = append(flags, f[1])
		}
		out[m[1]] = flags
	}
	if len(out) == 0 {
		t.Fatal("docs/WHESTBENCH.md: no verb table rows")
	}
	return out
}

// docFlagTable is the table "Flags of whestbench's that whestbake does not
// take" of docs/WHESTBENCH.md, a row as "VERB --FLAG".
func docFlagTable(t *testing.T, doc string) []string {
	t.Helper()
	row := regexp.MustCompile("(?m)^\\| `dataset ([a-z-]+)` \\| `--([a-z][a-z0-9-]*)` \\|")
	var out []string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1]+" --"+m[2])
	}
	if len(out) == 0 {
		t.Fatal("docs/WHESTBENCH.md: no rows in the table of whestbench's flags")
	}
	return out
}
