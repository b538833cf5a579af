package settings

import "testing"

// A value under the defaults (the dev stack's recorded addresses) fills a
// key that nothing else gives, and loses to the file, the environment and
// the flags.
func TestLoadUnder(t *testing.T) {
	clearEnv(t)
	under := map[string]string{
		"temporal.address": "127.0.0.1:17233",
		"s3.endpoint":      "127.0.0.1:19000",
		"temporal.ui":      "http://127.0.0.1:18233",
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
	if cfg, err := LoadUnder("", nil, nil); err != nil ||
		cfg.Temporal.Address != DefaultTemporalAddress ||
		cfg.Temporal.UI != "" {
		t.Errorf("no record: %+v, %v; want the default address and no UI", cfg.Temporal, err)
	}
}
