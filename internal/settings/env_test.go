package settings

import (
	"path/filepath"
	"testing"
)

// The one rule for environment variables: an empty WHESTBAKE_* clears its
// key, which takes its default as if neither the file nor the environment
// set it. A relative path from the file is relative to the file; one from
// the environment is relative to the working directory.
func TestEmptyVariableClearsItsKey(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "c.yaml", `
temporal:
  namespace: bakes
  tls:
    ca-file: ca.pem
    cert-file: client.pem
    key-file: client-key.pem
worker:
  threads: 3
`)
	t.Setenv(EnvName("temporal.tls.cert-file"), "")
	t.Setenv(EnvName("temporal.tls.key-file"), "")
	t.Setenv(EnvName("temporal.namespace"), "")
	t.Setenv(EnvName("worker.threads"), "")
	cfg, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	tls := cfg.Temporal.TLS
	if tls.CertFile != "" || tls.KeyFile != "" {
		t.Errorf("cleared cert-file %q, key-file %q: want both empty", tls.CertFile, tls.KeyFile)
	}
	if want := filepath.Join(dir, "ca.pem"); tls.CAFile != want {
		t.Errorf("ca-file %q, want %q (relative to the config file)", tls.CAFile, want)
	}
	if cfg.Temporal.Namespace != Default().Temporal.Namespace {
		t.Errorf("cleared namespace %q, want the default %q",
			cfg.Temporal.Namespace, Default().Temporal.Namespace)
	}
	if cfg.Worker.Threads == 3 {
		t.Error("cleared worker.threads kept the file's 3")
	}
	loaded, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Given("temporal.namespace") || !loaded.Given("temporal.tls.ca-file") {
		t.Errorf("Given: namespace %v (cleared), ca-file %v (from the file)",
			loaded.Given("temporal.namespace"), loaded.Given("temporal.tls.ca-file"))
	}
	// A cleared key takes what stands under it, as an unset one does.
	under := Under{
		Keys: []string{"temporal.namespace"},
		Read: func() (map[string]string, error) {
			return map[string]string{"temporal.namespace": "dev-ns"}, nil
		},
	}
	if cfg, err = LoadUnder(file, under, nil); err != nil || cfg.Temporal.Namespace != "dev-ns" {
		t.Errorf("LoadUnder: namespace %q (%v), want dev-ns", cfg.Temporal.Namespace, err)
	}
}

func TestEnvironmentPathsAreRelativeToTheWorkingDirectory(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "c.yaml", "s3:\n  ca-file: file-ca.pem\n")
	t.Setenv(EnvName("s3.ca-file"), "env-ca.pem")
	cfg, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.S3.CAFile != "env-ca.pem" {
		t.Errorf("s3.ca-file from the environment: %q, want env-ca.pem, "+
			"which the working directory resolves", cfg.S3.CAFile)
	}
	// A flag's path is the caller's own, as given.
	cfg, err = Load(file, map[string]string{"s3.ca-file": "flag-ca.pem"})
	if err != nil || cfg.S3.CAFile != "flag-ca.pem" {
		t.Errorf("s3.ca-file from a flag: %q (%v), want flag-ca.pem", cfg.S3.CAFile, err)
	}
}
