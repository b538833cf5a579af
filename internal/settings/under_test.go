package settings

import (
	"errors"
	"testing"
)

// A value under the defaults (the dev stack's recorded addresses) fills a
// key that nothing else gives, and loses to the file, the environment and
// the flags.
func TestLoadUnder(t *testing.T) {
	clearEnv(t)
	values := map[string]string{
		"temporal.address": "127.0.0.1:17233",
		"s3.endpoint":      "127.0.0.1:19000",
		"temporal.ui":      "http://127.0.0.1:18233",
	}
	under := Under{
		Keys: []string{"temporal.address", "s3.endpoint", "temporal.ui"},
		Read: func() (map[string]string, error) { return values, nil },
	}
	file := writeFile(t, t.TempDir(), "c.yaml", "temporal: {address: frontend.example:7233}\n")
	t.Setenv(EnvName("s3.endpoint"), "s3.example:443")
	cfg, err := LoadUnder(file, under, map[string]string{"temporal.ui": "https://ui.example"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Temporal.Address != "frontend.example:7233" || cfg.S3.Endpoint != "s3.example:443" ||
		cfg.Temporal.UI != "https://ui.example" {
		t.Errorf(
			"file, environment and flag lost to the values under them: %+v, %+v",
			cfg.Temporal,
			cfg.S3,
		)
	}
	clearEnv(t)
	cfg, err = LoadUnder("", under, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Temporal.Address != "127.0.0.1:17233" || cfg.S3.Endpoint != "127.0.0.1:19000" ||
		cfg.Temporal.UI != "http://127.0.0.1:18233" {
		t.Errorf(
			"nothing given, the values under the defaults should apply: %+v, %+v",
			cfg.Temporal,
			cfg.S3,
		)
	}
	if cfg, err := LoadUnder("", Under{}, nil); err != nil ||
		cfg.Temporal.Address != DefaultTemporalAddress ||
		cfg.Temporal.UI != "" {
		t.Errorf("no record: %+v, %v; want the default address and no UI", cfg.Temporal, err)
	}
}

// The values under the defaults are read only when a key of theirs is left
// without a value: a config that names every server never reads the dev
// stack's record, whatever lies at its path.
func TestLoadUnderReadsOnlyWhenNeeded(t *testing.T) {
	clearEnv(t)
	unreadable := Under{
		Keys: []string{"temporal.address", "s3.endpoint"},
		Read: func() (map[string]string, error) { return nil, errors.New("record unreadable") },
	}
	file := writeFile(t, t.TempDir(), "c.yaml", "temporal: {address: frontend.example:7233}\n")
	t.Setenv(EnvName("s3.endpoint"), "s3.example:443")
	if cfg, err := LoadUnder(file, unreadable, nil); err != nil ||
		cfg.Temporal.Address != "frontend.example:7233" {
		t.Errorf("both servers given: %+v, %v; want the record never read", cfg.Temporal, err)
	}
	clearEnv(t)
	if _, err := LoadUnder(file, unreadable, nil); err == nil {
		t.Error("s3.endpoint left to the record, yet its error was not returned")
	}
}
