package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// whestbench's test salt (bytes 0..31, tests/test_seeds_v4.py) and its SHA-256.
const (
	v4Salt       = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	v4SaltDigest = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
	otherSalt    = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
)

// v4Seeds starts with the input seed of whestbench's 4.0 anchor
// (estimator seed 1914761819, name seed 1338665652895792380).
const v4Seeds = "[6004799503160661, 1001, 2002, 3003]"

// Names of v4Seeds under v4Salt: keyed name seeds from CPython's
// hashlib.blake2b, named by CPython's random module with faker 37.12.0's
// lists (the oracle of naming/testdata/gen_names.py).
var v4Names = []string{"mark-figueroa", "holly-clements", "daniel-gay", "deborah-clark"}

func v4BakeArgs(t *testing.T, out string, extra ...string) []string {
	seeds := writeFile(t, filepath.Join(t.TempDir(), "seeds.json"), v4Seeds)
	args := []string{"dataset", "bake", "--n-mlps", "4", "--width", "4", "--depth", "2",
		"--n-samples", "100", "--sampler", "numpy", "--threads", "1",
		"--mlp-seeds", seeds, "--output", out}
	return append(args, extra...)
}

func readDataset(t *testing.T, dir string, allowPartial bool) *dataset.Dir {
	t.Helper()
	d, err := dataset.ReadDir(dir, allowPartial)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// assertNoSalt fails if the salt appears in any file under dir or in text,
// as hex (either case) or as raw bytes.
func assertNoSalt(t *testing.T, salt, dir string, text ...string) {
	t.Helper()
	raw, _ := hex.DecodeString(salt)
	for _, s := range text {
		if strings.Contains(strings.ToLower(s), salt) {
			t.Errorf("output shows the salt:\n%s", s)
		}
	}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(bytes.ToLower(b), []byte(salt)) || bytes.Contains(b, raw) {
			t.Errorf("%s contains the salt", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A 4.0 bake has a 3.0 bake's weights and statistics for the same seeds;
// only the names change (whestbench tests/test_dataset_v4_roundtrip.py:42),
// and they are the anchor's. The published salt is in the metadata only.
func TestProtocolV4RoundTrip(t *testing.T) {
	t.Setenv(dataset.SaltEnv, "")
	dir := t.TempDir()
	v3, v4 := filepath.Join(dir, "v3"), filepath.Join(dir, "v4")
	mustRun(t, v4BakeArgs(t, v3)...)
	code, stdout, stderr := run(t,
		v4BakeArgs(t, v4, "--seed-protocol", "4.0", "--seed-salt", v4Salt)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	published := "salt SHA-256 " + v4SaltDigest + " (published in metadata.json)"
	if !strings.Contains(stdout, published) || strings.Contains(stdout+stderr, v4Salt) {
		t.Errorf("bake output:\n%s%s", stdout, stderr)
	}
	a, b := readDataset(t, v3, false), readDataset(t, v4, false)
	for i, r := range b.Splits[0].Rows {
		old := a.Splits[0].Rows[i]
		if r.Name != v4Names[i] {
			t.Errorf("row %d: name %q, want %q", i, r.Name, v4Names[i])
		}
		r.Name = ""
		old.Name = ""
		if !datasettest.SameRow(r, old) {
			t.Errorf("row %d: 4.0 data differs from 3.0", i)
		}
	}
	proto, _ := b.Meta.GetObject("seed_protocol")
	var got []string
	for _, k := range proto.Keys() {
		v, _ := proto.GetString(k)
		got = append(got, k+"="+v)
	}
	want := "name=whestbench_kdf_per_mlp_seeds version=4.0 kdf=blake2b-keyed " +
		"salt_source=metadata salt_digest=" + v4SaltDigest + " salt=" + v4Salt
	if strings.Join(got, " ") != want {
		t.Errorf("seed_protocol %s\nwant %s", got, want)
	}
	readme := string(readBytes(t, filepath.Join(v4, "README.md")))
	if strings.Contains(readme, v4Salt) ||
		!strings.Contains(readme, "--seed-protocol 4.0 --seed-salt \"$SALT\"") {
		t.Errorf("card:\n%s", readme)
	}
	out := mustRun(t, "dataset", "verify", v4, "--mlps", "all")
	if strings.Count(out, "name ok") != 4 || strings.Count(out, "statistics bit-exact") != 4 {
		t.Errorf("verify:\n%s", out)
	}
	out = mustRun(t, "dataset", "inspect", v4)
	if !strings.Contains(out, "published in metadata.json") ||
		!strings.Contains(out, v4SaltDigest) ||
		strings.Contains(out, v4Salt) {
		t.Errorf("inspect:\n%s", out)
	}
}

// A withheld salt is written nowhere (salt_source env, its digest and ID
// recorded); readers bring it in WHEST_SEED_SALT, and a wrong one is caught.
func TestProtocolV4WithheldSalt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "holdout")
	t.Setenv(dataset.SaltEnv, v4Salt)
	code, stdout, stderr := run(t, v4BakeArgs(t, out, "--split", "holdout",
		"--seed-protocol", "4.0", "--withhold-salt", "--salt-id", "holdout-1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertNoSalt(t, v4Salt, out, stdout, stderr)
	d := readDataset(t, out, false)
	p := d.Info.SeedProtocol
	if p.SaltSource != "env" || p.SaltDigest != v4SaltDigest ||
		p.SaltID != "holdout-1" || p.Salt != "" {
		t.Errorf("seed protocol %+v", p)
	}
	for i, r := range d.Splits[0].Rows {
		if r.Name != v4Names[i] {
			t.Errorf("row %d: name %q, want %q", i, r.Name, v4Names[i])
		}
	}
	verify := mustRun(t, "dataset", "verify", out, "--mlps", "all")
	if strings.Count(verify, "name ok") != 4 {
		t.Errorf("verify with the salt:\n%s", verify)
	}
	// Without the salt, weights and statistics are still checked.
	t.Setenv(dataset.SaltEnv, "")
	verify = mustRun(t, "dataset", "verify", out, "--mlps", "all")
	const unchecked = "name not checked (salt withheld: set WHEST_SEED_SALT)"
	if strings.Count(verify, unchecked) != 4 || strings.Count(verify, "statistics bit-exact") != 4 {
		t.Errorf("verify without the salt:\n%s", verify)
	}
	t.Setenv(dataset.SaltEnv, otherSalt)
	code, _, stderr = run(t, "dataset", "verify", out)
	theirs := "the dataset's salt (id \"holdout-1\") has " + v4SaltDigest
	if code == 0 || !strings.Contains(stderr, theirs) || strings.Contains(stderr, otherSalt) {
		t.Errorf("verify with another salt: exit %d, %s", code, stderr)
	}
}

// Slices of a 4.0 bake share an explicit salt and merge into the unsliced
// bake's bytes (tests/test_dataset_v4_roundtrip.py:133); a slice with another
// salt is refused.
func TestProtocolV4SlicesMerge(t *testing.T) {
	t.Setenv(dataset.SaltEnv, "")
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	v4 := []string{"--seed-protocol", "4.0", "--seed-salt", v4Salt}
	mustRun(t, v4BakeArgs(t, at("whole"), v4...)...)
	for _, k := range []string{"0", "1"} {
		mustRun(t, v4BakeArgs(t, at("p"+k), append(v4, "--slice", k+"/2")...)...)
	}
	mustRun(t, "dataset", "merge", at("p1"), at("p0"), "--output", at("merged"))
	name := "data/public-00000-of-00001.parquet"
	whole := readBytes(t, filepath.Join(at("whole"), name))
	if !bytes.Equal(whole, readBytes(t, filepath.Join(at("merged"), name))) {
		t.Error("merged 4.0 slices differ from the unsliced bake")
	}
	p := readDataset(t, at("merged"), false).Info.SeedProtocol
	if p.Salt != v4Salt || p.SaltDigest != v4SaltDigest {
		t.Errorf("merged seed protocol %+v", p)
	}
	mustRun(t, v4BakeArgs(t, at("other"),
		"--seed-protocol", "4.0", "--seed-salt", otherSalt, "--slice", "1/2")...)
	code, _, stderr := run(t, "dataset", "merge", at("p0"), at("other"), "--output", at("bad"))
	if code == 0 || !strings.Contains(stderr, "seed_protocol") ||
		strings.Contains(stderr, v4Salt) || strings.Contains(stderr, otherSalt) {
		t.Errorf("merge across salts: exit %d, %s", code, stderr)
	}
}

// Unsliced, without --seed-salt: a fresh salt is generated and published.
func TestProtocolV4GeneratedSalt(t *testing.T) {
	t.Setenv(dataset.SaltEnv, "")
	out := filepath.Join(t.TempDir(), "gen")
	code, stdout, stderr := run(t, v4BakeArgs(t, out, "--seed-protocol", "4.0")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	p := readDataset(t, out, false).Info.SeedProtocol
	raw, err := hex.DecodeString(p.Salt)
	sum := sha256.Sum256(raw)
	if err != nil || len(raw) != 32 ||
		hex.EncodeToString(sum[:]) != p.SaltDigest || p.SaltSource != "metadata" {
		t.Fatalf("generated salt: %+v", p)
	}
	card := string(readBytes(t, filepath.Join(out, "README.md")))
	if strings.Contains(stdout+stderr, p.Salt) || strings.Contains(card, p.Salt) {
		t.Error("the generated salt left the metadata")
	}
	mustRun(t, "dataset", "verify", out, "--mlps", "all")
}

// Refusals that need the environment (the table in badinput_test.go runs
// without a salt in it).
func TestProtocolV4WithheldRefusals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	t.Setenv(dataset.SaltEnv, v4Salt)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--withhold-salt"}, "--salt-id is required when the salt is withheld"},
		{[]string{"--withhold-salt", "--salt-id", "a b"},
			`--salt-id "a b": use at most 128 letters`},
		{[]string{"--withhold-salt", "--salt-id", "x", "--seed-salt", v4Salt},
			"not from --seed-salt"},
	} {
		flags := append([]string{"--seed-protocol", "4.0"}, c.args...)
		code, _, stderr := run(t, v4BakeArgs(t, out, flags...)...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, v4Salt) {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
	t.Setenv(dataset.SaltEnv, "abcd")
	code, _, stderr := run(t,
		v4BakeArgs(t, out, "--seed-protocol", "4.0", "--withhold-salt", "--salt-id", "x")...)
	if code == 0 || !strings.Contains(stderr, "WHEST_SEED_SALT is 2 bytes") {
		t.Errorf("short env salt: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused bake wrote its output")
	}
}
