package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

func TestCombine(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	pub := testInfo(shape, 3, 0, 0)
	pub.Split = "mypublic"
	hold := testInfo(shape, 2, 0, 0)
	hold.Split = "holdout"
	hold.Config = "holdout"
	a := writeTestDir(t, parent, "a", pub)
	b := writeTestDir(t, parent, "b", hold)
	out := filepath.Join(parent, "combined")
	if err := Combine([]string{a, b}, out, ""); err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"holdout-00000-of-00001.parquet", "mypublic-00000-of-00001.parquet"}
	if got := dirEntries(t, filepath.Join(out, "data")); !slices.Equal(got, wantFiles) {
		t.Errorf("data/ holds %v", got)
	}
	for _, c := range [][2]string{{a, "mypublic"}, {b, "holdout"}} {
		name := shardName(c[1], 0, 1)
		src, _ := os.ReadFile(filepath.Join(c[0], "data", name))
		dst, _ := os.ReadFile(filepath.Join(out, "data", name))
		if len(src) == 0 || !bytes.Equal(src, dst) {
			t.Errorf("%s not copied byte-for-byte", name)
		}
	}
	d, err := ReadDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	md := d.Meta
	wantKeys := "schema_version,format,backend,seed_protocol,n_samples,width,depth," +
		"created_at_utc,hardware,splits,default_split,prepared_splits"
	if got := strings.Join(md.Keys(), ","); got != wantKeys {
		t.Errorf("combined keys %s", got)
	}
	if s, _ := md.GetString("default_split"); s != "mypublic" {
		t.Errorf("default_split %q: the one default-config input", s)
	}
	splits, _ := md.GetObject("splits")
	entry, _ := splits.GetObject("mypublic")
	wantEntryKeys := "n_mlps,created_at_utc,config,hardware_fingerprints," +
		"sampler,engine,algorithm_version,seed_file_sha256,device"
	if got := strings.Join(entry.Keys(), ","); got != wantEntryKeys {
		t.Errorf("split entry keys %s", got)
	}
	if n, _ := entry.GetInt("n_mlps"); n != 3 {
		t.Errorf("n_mlps %d", n)
	}
	card, _ := os.ReadFile(filepath.Join(out, "README.md"))
	for _, frag := range []string{
		"config_name: holdout", "path: data/mypublic-*.parquet", "multi-split",
	} {
		if !strings.Contains(string(card), frag) {
			t.Errorf("card lacks %q", frag)
		}
	}
}

// Splits of one 4.0 bake share the whole seed_protocol block, which the
// combined dataset keeps; its card describes the withheld salt.
func TestCombineProtocolV4(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	var dirs []string
	for _, split := range []string{"mini", "full"} {
		info := testInfo(shape, 2, 0, 0)
		info.Split = split
		info.Config = split
		info.Salt = &SaltRecord{Digest: testSaltDigest, ID: "eval-1"}
		dirs = append(dirs, writeTestDir(t, parent, split, info))
	}
	out := filepath.Join(parent, "combined")
	if err := Combine(dirs, out, ""); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Info.SeedProtocol
	if !p.SaltWithheld() || p.SaltDigest != testSaltDigest || p.SaltID != "eval-1" {
		t.Errorf("combined seed protocol %+v", p)
	}
	card, _ := os.ReadFile(filepath.Join(out, "README.md"))
	for _, frag := range []string{
		"withheld: supply it as hex in `WHEST_SEED_SALT`",
		"--split mini --config mini",
		"--withhold-salt --salt-id eval-1 --output rebake-full",
	} {
		if !strings.Contains(string(card), frag) {
			t.Errorf("card lacks %q", frag)
		}
	}
}

func TestCombineDefaultSplitRules(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	mk := func(t *testing.T, parent string, configs ...string) []string {
		var dirs []string
		for i, c := range configs {
			info := testInfo(shape, 2, 0, 0)
			info.Split = []string{"public", "holdout", "extra"}[i]
			info.Config = c
			dirs = append(dirs, writeTestDir(t, parent, info.Split, info))
		}
		return dirs
	}
	for _, c := range []struct {
		configs  []string
		explicit string
		want     string // "" = no default_split
	}{
		{[]string{"default", "default"}, "", ""},
		{[]string{"default", "default"}, "holdout", "holdout"},
		{[]string{"full", "holdout"}, "", ""},
		{[]string{"full", "default"}, "", "holdout"},
	} {
		parent := t.TempDir()
		out := filepath.Join(parent, "out")
		if err := Combine(mk(t, parent, c.configs...), out, c.explicit); err != nil {
			t.Fatal(err)
		}
		md, _ := ReadMetadata(out)
		got, _ := md.GetString("default_split")
		if got != c.want {
			t.Errorf("configs %v explicit %q: default_split %q want %q",
				c.configs, c.explicit, got, c.want)
		}
	}
}

func TestCombineSingleFixture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := Combine([]string{fixtures + "/single_split_v3_protocol"}, out, ""); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Splits[0].Name != "public" || len(d.Splits[0].Rows) != 4 {
		t.Errorf("splits %+v", d.Splits)
	}
}

func TestCombineRefusals(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	mk := func(t *testing.T, parent, split string, edit func(*BakeInfo)) string {
		info := testInfo(shape, 2, 0, 0)
		info.Split = split
		if edit != nil {
			edit(&info)
		}
		return writeTestDir(t, parent, split+"-"+filepath.Base(t.TempDir()), info)
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, parent string) ([]string, string)
		check func(t *testing.T, err error)
	}{
		{"empty", func(t *testing.T, parent string) ([]string, string) { return nil, "" },
			wantErr[*MergeIncompatibleError]("at least one input")},
		{"partial", func(t *testing.T, parent string) ([]string, string) {
			partial := func(i *BakeInfo) { i.Range = [2]int{0, 1} }
			return []string{mk(t, parent, "public", partial)}, ""
		}, wantErr[*MergeIncompatibleError]("partial", "merge")},
		{"multi-split input", func(t *testing.T, parent string) ([]string, string) {
			return []string{fixtures + "/multi_config_v3.0"}, ""
		}, wantErr[*MergeIncompatibleError]("already a multi-split")},
		{"duplicate", func(t *testing.T, parent string) ([]string, string) {
			return []string{mk(t, parent, "public", nil), mk(t, parent, "public", nil)}, ""
		}, wantErr[*MergeIncompatibleError]("duplicate split name \"public\"")},
		{"unknown default", func(t *testing.T, parent string) ([]string, string) {
			return []string{mk(t, parent, "public", nil)}, "mini"
		}, wantErr[*MergeIncompatibleError]("default_split=\"mini\"")},
		{"width", func(t *testing.T, parent string) ([]string, string) {
			wide := testInfo(bakeapi.Spec{Width: 8, Depth: 2}, 2, 0, 0)
			wide.Split = "holdout"
			return []string{mk(t, parent, "public", nil), writeTestDir(t, parent, "wide", wide)}, ""
		}, wantErr[*MergeIncompatibleError]("width=8 != 4")},
		{"sampler", func(t *testing.T, parent string) ([]string, string) {
			numpy := func(i *BakeInfo) { i.Sampler = "numpy" }
			return []string{mk(t, parent, "public", nil), mk(t, parent, "holdout", numpy)}, ""
		}, wantErr[*MergeIncompatibleError]("sampler=\"numpy\" != \"philox\"")},
		{"salt", func(t *testing.T, parent string) ([]string, string) {
			return []string{
				mk(t, parent, "public", func(i *BakeInfo) {
					i.Salt = &SaltRecord{Digest: testSaltDigest, Hex: testSalt}
				}),
				mk(t, parent, "holdout", func(i *BakeInfo) {
					i.Salt = &SaltRecord{Digest: testSaltDigest, ID: "h"}
				}),
			}, ""
		}, func(t *testing.T, err error) {
			schematest.WantErr[*MergeIncompatibleError](t, err, "seed_protocol",
				`"salt_source": "env"`, "<salt with sha256 "+testSaltDigest+">")
			if strings.Contains(err.Error(), testSalt) {
				t.Errorf("the error shows the salt: %v", err)
			}
		}},
		{"backend", func(t *testing.T, parent string) ([]string, string) {
			fixture := fixtures + "/single_split_v3_protocol"
			return []string{mk(t, parent, "holdout", nil), fixture}, ""
		}, wantErr[*MergeIncompatibleError]("backend=\"flopscope\"")},
		{"corrupt input", func(t *testing.T, parent string) ([]string, string) {
			d := mk(t, parent, "public", nil)
			p := filepath.Join(d, "data", shardName("public", 0, 1))
			data, _ := os.ReadFile(p)
			if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{d}, ""
		}, wantErr[*InvalidDatasetError]("corrupt or truncated")},
	} {
		t.Run(c.name, func(t *testing.T) {
			inputs, def := c.setup(t, t.TempDir())
			outParent := t.TempDir()
			c.check(t, Combine(inputs, filepath.Join(outParent, "out"), def))
			if left := dirEntries(t, outParent); len(left) != 0 {
				t.Errorf("failed combine left %v", left)
			}
		})
	}
	existing := t.TempDir()
	schematest.WantErr[*OutputExistsError](t, Combine(nil, existing, ""), existing)
}
