package mlps

import (
	"errors"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

const (
	testSalt   = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	testDigest = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
)

func env(vals map[string]string) func(string) string {
	return func(k string) string { return vals[k] }
}

// saltEnv is an environment that sets only WHEST_SEED_SALT, to value.
func saltEnv(value string) func(string) string {
	return env(map[string]string{dataset.SaltEnv: value})
}

// whestbench's resolve_salt (seeds.py:126-177): metadata or environment,
// digest checked, no default, every failure an error.
func TestDatasetSalt(t *testing.T) {
	v4 := func(source, digest, salt string) dataset.SeedProtocol {
		return dataset.SeedProtocol{
			Name:       dataset.SeedProtocolV4Name,
			Version:    "4.0",
			SaltSource: source,
			SaltDigest: digest,
			SaltID:     "h1",
			Salt:       salt,
		}
	}
	none := env(nil)
	withSalt := saltEnv(testSalt)
	for _, c := range []struct {
		name  string
		proto dataset.SeedProtocol
		env   func(string) string
		want  string // "" = the test salt
	}{
		{"metadata", v4("metadata", testDigest, testSalt), none, ""},
		{"metadata without a digest", v4("metadata", "", testSalt), none, ""},
		{"metadata ignores the environment", v4("metadata", "", testSalt), saltEnv("ff"), ""},
		{
			"metadata digest mismatch",
			v4("metadata", strings.Repeat("0", 64), testSalt),
			none,
			"has SHA-256 " + testDigest + ", but the dataset's salt (id \"h1\") has 0000",
		},
		{
			"metadata not hex",
			v4("metadata", "", "zz"),
			none,
			"metadata seed_protocol.salt is not a hex string",
		},
		{"environment", v4("env", testDigest, ""), withSalt, ""},
		{
			"environment unset",
			v4("env", testDigest, ""),
			none,
			"salt withheld: this dataset records only its salt's SHA-256 (id \"h1\"); " +
				"set WHEST_SEED_SALT",
		},
		{
			"environment wrong salt",
			v4("env", testDigest, ""),
			saltEnv("ab"),
			"the salt in WHEST_SEED_SALT has SHA-256",
		},
		{
			"environment not hex",
			v4("env", testDigest, ""),
			saltEnv("0"),
			"WHEST_SEED_SALT is not a hex string",
		},
	} {
		salt, err := DatasetSalt(c.proto, c.env)
		switch {
		case c.want == "" && (err != nil || salt.Hex() != testSalt):
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" &&
			(err == nil || !strings.Contains(err.Error(), c.want) || !salt.IsZero()):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := DatasetSalt(v4("env", testDigest, ""), none); !errors.Is(err, ErrSaltWithheld) {
		t.Errorf("unset withheld salt: %v is not ErrSaltWithheld", err)
	}
}

func TestParseBakeSalt(t *testing.T) {
	if s, err := ParseBakeSalt(testSalt); err != nil || s.Digest() != testDigest {
		t.Errorf("%v", err)
	}
	if _, err := ParseBakeSalt("00ff"); err == nil ||
		!strings.Contains(err.Error(), "is 2 bytes: bake with a 32-byte salt") {
		t.Errorf("short salt: %v", err)
	}
}

// A bake's salt comes from WHEST_SEED_SALT under the bake's rule
// (ParseBakeSalt); every error names the variable and never the text.
// A reader of a dataset takes the shorter keys whestbench accepts.
func TestEnvSalt(t *testing.T) {
	if s, err := EnvSalt(saltEnv(testSalt)); err != nil || s.Digest() != testDigest {
		t.Errorf("the test salt: %v", err)
	}
	if _, err := EnvSalt(env(nil)); !errors.Is(err, ErrSaltUnset) ||
		err.Error() != "WHEST_SEED_SALT is not set" {
		t.Errorf("unset: %v", err)
	}
	for text, want := range map[string]string{
		"zz1":  "WHEST_SEED_SALT is not a hex string",
		"abcd": "WHEST_SEED_SALT is 2 bytes: bake with a 32-byte salt",
	} {
		s, err := EnvSalt(saltEnv(text))
		if err == nil ||
			!strings.HasPrefix(err.Error(), want) ||
			strings.Contains(err.Error(), text) ||
			!s.IsZero() {
			t.Errorf("%q: got %v, want an error starting %q", text, err, want)
		}
	}
	short := "0102030405060708090a0b0c0d0e0f10"
	proto := dataset.SeedProtocol{
		Name:       dataset.SeedProtocolV4Name,
		Version:    "4.0",
		SaltSource: "env",
	}
	if s, err := DatasetSalt(proto, saltEnv(short)); err != nil || s.Hex() != short {
		t.Errorf("a reader refused a 16-byte salt: %v", err)
	}
}
