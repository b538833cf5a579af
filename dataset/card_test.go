package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/bakeapi"
)

func frontMatter(t *testing.T, card string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(card, "---\n")
	fm, _, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		t.Fatalf("no front matter in %q", card[:min(len(card), 80)])
	}
	return fm + "\n"
}

// whestbench's cards were written by PyYAML; with whestbench's pretty name
// our front matter must be the same bytes.
func TestFrontMatterMatchesWhestbenchFixtures(t *testing.T) {
	for _, name := range []string{"single_split_v3_protocol", "multi_config_v3.0"} {
		dir := filepath.Join(fixtures, name)
		md, err := ReadMetadata(dir)
		if err != nil {
			t.Fatal(err)
		}
		md.Set("pretty_name", "WhestBench 2026: ARC White-Box Estimation Challenge")
		card, err := RenderCard(md)
		if err != nil {
			t.Fatal(err)
		}
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := frontMatter(t, card), frontMatter(t, string(readme)); got != want {
			t.Errorf("%s front matter:\n got %s\nwant %s", name, got, want)
		}
	}
}

type frontMatterDoc struct {
	Configs []struct {
		ConfigName string `yaml:"config_name"`
		DataFiles  []struct {
			Path  string `yaml:"path"`
			Split string `yaml:"split"`
		} `yaml:"data_files"`
	} `yaml:"configs"`
	License string   `yaml:"license"`
	Tags    []string `yaml:"tags"`
	Sizes   []string `yaml:"size_categories"`
}

// configsOf renders md's card and returns its configs as
// "config:split,split;config:split" via an independent YAML parser.
func configsOf(t *testing.T, md Metadata) (string, frontMatterDoc) {
	t.Helper()
	card, err := RenderCard(md)
	if err != nil {
		t.Fatal(err)
	}
	var doc frontMatterDoc
	if err := yaml.Unmarshal([]byte(frontMatter(t, card)), &doc); err != nil {
		t.Fatalf("front matter is not YAML: %v", err)
	}
	var parts []string
	for _, c := range doc.Configs {
		var splits []string
		for _, f := range c.DataFiles {
			if f.Path != "data/"+f.Split+"-*.parquet" {
				t.Errorf("config %s: path %s for split %s", c.ConfigName, f.Path, f.Split)
			}
			splits = append(splits, f.Split)
		}
		parts = append(parts, c.ConfigName+":"+strings.Join(splits, ","))
	}
	return strings.Join(parts, ";"), doc
}

func TestCardConfigsRules(t *testing.T) {
	for _, c := range []struct {
		name, md, want string
	}{
		{"single default",
			`{` + v3Meta + `, "n_mlps": 2, "split": "public", "config": "default"}`, ""},
		{"single no config", `{` + v3Meta + `, "n_mlps": 2}`, ""},
		{"single named", `{` + v3Meta + `, "n_mlps": 2, "split": "my-split", "config": "full"}`,
			"full:my-split"},
		{"multi distinct configs", `{` + v3Meta + `, "splits": ` +
			`{"a": {"n_mlps": 1, "config": "x"}, "b": {"n_mlps": 1, "config": "default"}, ` +
			`"c": {"n_mlps": 1, "config": "x"}, "d": {"n_mlps": 1}}}`,
			"default:b,d;x:a,c"},
		{"multi default_split", `{` + v3Meta + `, "splits": ` +
			`{"public": {"n_mlps": 1, "config": "default"}, ` +
			`"holdout": {"n_mlps": 1, "config": "default"}, "mini": {"n_mlps": 1}}, ` +
			`"default_split": "holdout"}`,
			"default:holdout;public:public;mini:mini"},
		{"multi legacy", `{` + v3Meta + `, "splits": ` +
			`{"public": {"n_mlps": 1}, "holdout": {"n_mlps": 1}}}`,
			"default:public,holdout"},
	} {
		got, doc := configsOf(t, mustObj(t, c.md))
		if got != c.want {
			t.Errorf("%s: configs %q want %q", c.name, got, c.want)
		}
		if doc.License != "cc-by-4.0" || doc.Tags[0] != "whestbench" {
			t.Errorf("%s: license %q tags %v", c.name, doc.License, doc.Tags)
		}
		multiTagged := doc.Tags[len(doc.Tags)-1] == "multi-split"
		if multi := strings.HasPrefix(c.name, "multi"); multi != multiTagged {
			t.Errorf("%s: tags %v", c.name, doc.Tags)
		}
	}
	_, doc := configsOf(t, mustObj(t, `{`+v3Meta+`, "n_mlps": 12000}`))
	if doc.Sizes[0] != "10K<n<100K" {
		t.Errorf("size category %v", doc.Sizes)
	}
}

func TestCardBody(t *testing.T) {
	info := testInfo(bakeapi.Spec{Width: 1024, Depth: 16}, 1000, 0, 0)
	info.NSamples = 1_000_000_000
	info.Split = "my-custom-split"
	info.Config = "full"
	card, err := RenderCard(NewBakeMetadata(info), CardRepo("aicrowd/whest-gt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{
		"`mlp_id`", "`mlp_name`", "`mlp_seed`", "`weights`", "`all_layer_means`", "`final_means`",
		"`avg_variance`", "`sampling_budget_breakdown`",
		"float32 [16][1024][1024]",
		"h_l = relu(h_{l-1} @ W_l)", "N(0, 2/W)", "**1,000,000,000**",
		"(1/W) Σ_j ((1/N) Σ_n h_{D,j}(x_n)² − μ_j²)",
		"exactly", "Philox4x32-10",
		"--n-mlps 1000 --n-samples 1000000000 --width 1024 --depth 16",
		"--split my-custom-split --config full --mlp-seeds my-custom-split-seeds.json " +
			"--sampler philox",
		`datasets.load_dataset("aicrowd/whest-gt", "full", split="my-custom-split")`,
		"Single bake (engine `cpu`, device `cpu`)",
		"CC BY 4.0",
	} {
		if !strings.Contains(card, frag) {
			t.Errorf("card lacks %q", frag)
		}
	}
	info.Sampler = "numpy"
	info.DotProduct = "muladd"
	numpyCard, err := RenderCard(NewBakeMetadata(info))
	recipe := "--sampler numpy --dot-product muladd --output rebake-my-custom-split"
	if err != nil || !strings.Contains(numpyCard, recipe) {
		t.Errorf("numpy recipe must pin the dot product (%v)", err)
	}
	if strings.Contains(card, "Production ground truth uses") {
		t.Error("N = 10^9 card carries the small-N remark")
	}

	md, err := ReadMetadata(fixtures + "/multi_split_v3.0")
	if err != nil {
		t.Fatal(err)
	}
	card, err = RenderCard(md)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(card, "whestbake dataset bake") ||
		!strings.Contains(card, "seed protocol 2.0") {
		t.Error("a protocol 2.0 card must not offer a whestbake re-bake")
	}
	if _, err := RenderCard(NewObject()); err == nil {
		t.Error("invalid metadata rendered")
	}
}

// The 4.0 sections say where the salt is and how to re-bake with it, and
// never print it (whestbench tests/test_dataset_v4_roundtrip.py: "card never
// contains the salt", "card 4.0 section, salt-id hint").
func TestCardProtocolV4(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	published := testInfo(shape, 3, 0, 0)
	published.Salt = &SaltRecord{Digest: testSaltDigest, Hex: testSalt}
	withheld := testInfo(shape, 3, 0, 0)
	withheld.Split = "holdout"
	withheld.Salt = &SaltRecord{Digest: testSaltDigest, ID: "holdout-2026"}
	for _, c := range []struct {
		name  string
		info  BakeInfo
		frags []string
	}{
		{"published", published, []string{
			"| salt | published in `metadata.json` (`seed_protocol.salt`), " +
				"SHA-256 `" + testSaltDigest + "` |",
			"whest-4.0-est", "whest-4.0-name", "BLAKE2b",
			`SALT=$(python -c "import json; ` +
				`print(json.load(open('metadata.json'))['seed_protocol']['salt'])")`,
			`--sampler philox --seed-protocol 4.0 --seed-salt "$SALT" --output rebake-public`,
		}},
		{"withheld", withheld, []string{
			"| salt | withheld: supply it as hex in `WHEST_SEED_SALT`, id `holdout-2026`, " +
				"SHA-256 `" + testSaltDigest + "` |",
			"needs the salt as hex in `WHEST_SEED_SALT`",
			"The salt (id `holdout-2026`) is withheld",
			"read -rs WHEST_SEED_SALT && export WHEST_SEED_SALT",
			"--sampler philox --seed-protocol 4.0 --withhold-salt --salt-id holdout-2026 " +
				"--output rebake-holdout",
		}},
	} {
		card, err := RenderCard(NewBakeMetadata(c.info))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.frags {
			if !strings.Contains(card, f) {
				t.Errorf("%s card lacks %q", c.name, f)
			}
		}
		if strings.Contains(strings.ToLower(card), testSalt[8:40]) {
			t.Errorf("%s card contains the salt", c.name)
		}
	}
}
