package localbake_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/localbake"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seeds"
)

// localInput is a valid 5-MLP bake into a fresh directory, its fields
// named as the CLI names them.
func localInput(t *testing.T) localbake.Input {
	t.Helper()
	return localbake.Input{
		NMLPs:  5,
		Split:  "public",
		Config: "default",
		Spec: bakeapi.Spec{
			Width:    4,
			Depth:    2,
			NSamples: 256,
			Sampler:  bakeapi.SamplerPhilox,
		},
		Threads: 1,
		Output:  filepath.Join(t.TempDir(), "out"),
		Getenv:  func(string) string { return "" },
		Names:   func(field string) string { return "--" + field },
	}
}

const saltHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// sha256Hex is the SHA-256 of b, computed here rather than by the code
// under test.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Under protocol 4.0 the salt is the given one, the withheld one from the
// environment, or a fresh 32-byte one; the declaration records its
// SHA-256 (of the salt's bytes) and never the salt. Under 3.0 there is none.
func TestPlanResolvesTheSalt(t *testing.T) {
	raw, _ := hex.DecodeString(saltHex)
	given := localInput(t)
	given.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	given.SaltHex = saltHex
	withheld := localInput(t)
	withheld.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	withheld.Spec.Salt = bakeapi.Salt{Withhold: true, ID: "holders"}
	withheld.Getenv = func(k string) string {
		return map[string]string{dataset.SaltEnv: saltHex}[k]
	}
	for name, in := range map[string]localbake.Input{"given": given, "withheld": withheld} {
		p, err := localbake.Plan(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Salt.Hex() != saltHex || p.Spec.Salt.SHA256 != sha256Hex(raw) {
			t.Errorf("%s: salt %s declared as %s; want the given salt, declared as %s",
				name, p.Salt.Hex(), p.Spec.Salt.SHA256, sha256Hex(raw))
		}
	}
	fresh := localInput(t)
	fresh.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	p, err := localbake.Plan(fresh)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := hex.DecodeString(p.Salt.Hex())
	if len(b) != seeds.SaltBytes || p.Spec.Salt.SHA256 != sha256Hex(b) {
		t.Errorf("generated salt of %d bytes declared as %s", len(b), p.Spec.Salt.SHA256)
	}
	p, err = localbake.Plan(localInput(t))
	if err != nil || !p.Salt.IsZero() || p.Spec.Salt.SHA256 != "" {
		t.Errorf("protocol 3.0: salt %v declared as %q, %v", p.Salt, p.Spec.Salt.SHA256, err)
	}
}

// Every error names its field as Names does; errors in the settings are
// SettingsErrors (usage errors on a command line), errors in what they
// point to or need are not.
func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	neg := int64(-1)
	cases := []struct {
		name     string
		edit     func(*localbake.Input)
		want     string
		settings bool
	}{
		{"short salt", func(in *localbake.Input) {
			in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
			in.SaltHex = "abcd"
		}, "--seed-salt is 2 bytes: bake with a 32-byte salt", true},
		{"withheld and given", func(in *localbake.Input) {
			in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
			in.SaltHex = saltHex
			in.Spec.Salt = bakeapi.Salt{Withhold: true, ID: "h"}
		}, "--withhold-salt takes the salt from WHEST_SEED_SALT only, not from --seed-salt", true},
		{"withheld and unset", func(in *localbake.Input) {
			in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
			in.Spec.Salt = bakeapi.Salt{Withhold: true, ID: "h"}
		}, "--withhold-salt takes the salt from WHEST_SEED_SALT, which is not set", true},
		{"sliced without salt", func(in *localbake.Input) {
			in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
			in.Sliced = true
			in.Slice = "0/2"
		}, "a sliced seed protocol 4.0 bake (--slice or --mlp-range) needs --seed-salt", true},
		{"salt under 3.0", func(in *localbake.Input) { in.SaltHex = saltHex },
			"--seed-salt is only meaningful for seed protocol 4.0", true},
		{"zero width", func(in *localbake.Input) { in.Spec.Width = 0 },
			"--width is missing or 0", true},
		{"malformed slice", func(in *localbake.Input) { in.Slice = "half" },
			"--slice must be K/N", true},
		{"range beyond n", func(in *localbake.Input) { in.MLPRange = "3-9" },
			"--mlp-range 3-9: ", true},
		{"existing output", func(in *localbake.Input) { in.Output = existing },
			"already exists", false},
		{"over the memory limit", func(in *localbake.Input) {
			in.MemoryLimit = func() (int64, error) { return 1 << 20, nil }
		}, "this process may use: lower width or depth, or run on a machine with more memory " +
			"(--max-memory sets the limit)", false},
		{"negative root seed", func(in *localbake.Input) { in.RootSeed = &neg },
			"--seed must be a non-negative integer, got -1", false},
		{"missing seeds file", func(in *localbake.Input) {
			in.SeedsFile = filepath.Join(dir, "nope.json")
		}, "cannot read --mlp-seeds file: ", false},
	}
	for _, c := range cases {
		in := localInput(t)
		c.edit(&in)
		_, err := localbake.Plan(in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
			continue
		}
		if got := errors.As(err, new(localbake.SettingsError)); got != c.settings {
			t.Errorf("%s: a SettingsError: %v, want %v", c.name, got, c.settings)
		}
	}
}

// The memory limit is asked only of valid settings, so that a front end
// reports their errors first, and its error is returned as it is.
func TestPlanAsksTheMemoryLimitLast(t *testing.T) {
	limitErr := errors.New("no limit today")
	asked := false
	in := localInput(t)
	in.MemoryLimit = func() (int64, error) { asked = true; return 0, limitErr }
	in.Spec.Width = 0
	if _, err := localbake.Plan(in); asked || !errors.As(err, new(localbake.SettingsError)) {
		t.Errorf("invalid settings: asked %v, err %v", asked, err)
	}
	in.Spec.Width = 4
	if _, err := localbake.Plan(in); !asked || err != limitErr {
		t.Errorf("valid settings: asked %v, err %v", asked, err)
	}
}

// The MLP range is whestbench's slice K/N, [K·n/N, (K+1)·n/N), an
// inclusive START-END, or every MLP; the seeds come from the file (its
// SHA-256 that of its bytes), from the root seed, or from OS entropy
// (Generated: no other slice can reproduce them).
func TestPlanRangeAndSeeds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "seeds.json")
	text := "[5, 4, 3, 2, 1]"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	root := int64(7)
	u := uint64(root)
	fromRoot, err := seeds.GenerateInputSeeds(5, &u)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		edit      func(*localbake.Input)
		rng       bakeapi.Range
		seeds     []int64
		sha256    string
		generated bool
	}{
		{
			"slice from a file",
			func(in *localbake.Input) {
				in.Slice = "1/2"
				in.SeedsFile = file
			},
			bakeapi.Range{Start: 2, End: 5},
			[]int64{5, 4, 3, 2, 1},
			sha256Hex([]byte(text)),
			false,
		},
		{
			"range from a root seed",
			func(in *localbake.Input) {
				in.MLPRange = "1-3"
				in.RootSeed = &root
			},
			bakeapi.Range{Start: 1, End: 4},
			fromRoot,
			sha256Hex(mlps.EncodeSeeds(fromRoot)),
			false,
		},
		{"all from entropy", func(*localbake.Input) {},
			bakeapi.Range{Start: 0, End: 5}, nil, "", true},
	} {
		in := localInput(t)
		c.edit(&in)
		p, err := localbake.Plan(in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Range != c.rng || p.Seeds.Generated != c.generated || len(p.Seeds.Seeds) != 5 {
			t.Errorf("%s: range %v, %d seeds, generated %v", c.name, p.Range, len(p.Seeds.Seeds),
				p.Seeds.Generated)
		}
		if c.seeds != nil &&
			(!reflect.DeepEqual(p.Seeds.Seeds, c.seeds) || p.Seeds.SHA256 != c.sha256) {
			t.Errorf(
				"%s: seeds %v (sha256 %s), want %v (%s)",
				c.name,
				p.Seeds.Seeds,
				p.Seeds.SHA256,
				c.seeds,
				c.sha256,
			)
		}
	}
}

// Device auto keeps a tiny bake on the CPU; an unknown device is a field
// error of gpuengine.FieldDevice.
func TestOpenEngine(t *testing.T) {
	p, err := localbake.Plan(localInput(t))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := localbake.OpenEngine(gpuengine.DeviceAuto, p, 1)
	if err != nil || eng.Describe().Device != gpuengine.DeviceCPU {
		t.Fatalf("auto: %v, %v", eng, err)
	}
	_, err = localbake.OpenEngine("tpu", p, 1)
	if fe := bakeapi.AsFieldErrors(err); len(fe) != 1 || fe[0].Field != gpuengine.FieldDevice {
		t.Errorf("tpu: %v", err)
	}
}

// WriteDir writes the plan's range as a partial that reads back with the
// plan's seeds in order; a bake that fails leaves no directory.
func TestWriteDir(t *testing.T) {
	in := localInput(t)
	in.MLPRange = "1-3"
	p, err := localbake.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	var done int64
	err = localbake.WriteDir(context.Background(), localbake.WriteInput{
		Plan:     p,
		Engine:   gpuengine.CPU{},
		Threads:  1,
		Progress: func(n int64) { done += n },
		Output:   in.Output,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.ReadDir(in.Output, true)
	if err != nil {
		t.Fatal(err)
	}
	rows := d.Splits[0].Rows
	if len(rows) != 3 || !d.Info.IsPartial || done != 3*256 {
		t.Fatalf("%d rows, partial %v, %d samples reported", len(rows), d.Info.IsPartial, done)
	}
	for i, r := range rows {
		if int(r.MLPID) != 1+i || r.Seed != p.Seeds.Seeds[1+i] {
			t.Errorf("row %d: mlp_id %d, seed %d", i, r.MLPID, r.Seed)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	failed := filepath.Join(t.TempDir(), "failed")
	err = localbake.WriteDir(ctx, localbake.WriteInput{
		Plan:    p,
		Engine:  gpuengine.CPU{},
		Threads: 1,
		Output:  failed,
	})
	if _, statErr := os.Lstat(failed); err == nil || statErr == nil {
		t.Errorf("a cancelled bake: %v, and its output %v", err, statErr)
	}
}
