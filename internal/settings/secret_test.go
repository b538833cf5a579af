package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredentialsNeverPrinted(t *testing.T) {
	cfg, err := load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.S3.SecretKey.Reveal() != testSecret {
		t.Fatalf("secret not loaded: the test would prove nothing")
	}
	var logged bytes.Buffer
	jsonLog := slog.New(slog.NewJSONHandler(&logged, nil))
	jsonLog.Info("config", "cfg", cfg, "s3", cfg.S3, "secret", cfg.S3.SecretKey)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", cfg, "s3", cfg.S3)
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in, err := BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inJSON, _ := json.Marshal(in)
	outputs := map[string]string{
		"%v":  fmt.Sprintf("%v", cfg),
		"%+v": fmt.Sprintf("%+v", cfg),
		"%#v": fmt.Sprintf("%#v", cfg),
		//lint:ignore S1025 the test is about what each verb prints, %s included
		"%s":        fmt.Sprintf("%s", cfg),
		"&cfg %+v":  fmt.Sprintf("%+v", &cfg),
		"s3 %+v":    fmt.Sprintf("%+v", cfg.S3),
		"s3 %#v":    fmt.Sprintf("%#v", cfg.S3),
		"secret %v": fmt.Sprint(cfg.S3.SecretKey),
		"secret %q": fmt.Sprintf("%q", cfg.S3.SecretKey),
		"slog":      logged.String(),
		"json":      string(js),
		"BakeInput": string(inJSON),
	}
	for name, out := range outputs {
		if strings.Contains(out, testSecret) {
			t.Errorf("%s shows the secret: %s", name, out)
		}
	}
	if !strings.Contains(outputs["%v"], "credentials=set") ||
		!strings.Contains(outputs["s3 %+v"], "[redacted]") {
		t.Errorf("redacted output lost its meaning: %s / %s", outputs["%v"], outputs["s3 %+v"])
	}
}

// Library errors (viper, mapstructure) quote values; Load scrubs the secret from them.
func TestLoadErrorsScrubTheSecret(t *testing.T) {
	for _, bad := range []string{
		strings.Replace(base, "width: 8", "width: "+testSecret, 1),
		strings.Replace(
			base,
			"secret-key: "+testSecret,
			"secret-key: "+testSecret+"\n  secret_key: "+testSecret,
			1,
		),
		base + "\ntemporal: [" + testSecret + "]\n",
	} {
		_, err := load(t, bad)
		if err == nil {
			t.Fatalf("accepted:\n%s", bad)
		}
		if strings.Contains(err.Error(), testSecret) {
			t.Errorf("error shows the secret: %v", err)
		}
	}
}

// The Temporal API key is a Secret like the S3 one: from the file or the
// environment, never printed, and scrubbed from library errors.
func TestAPIKeyNeverPrinted(t *testing.T) {
	const key = "tmprl-apikey-Rk2-never-print"
	cfg, err := load(t, base+"temporal: {api-key: "+key+"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Temporal.APIKey.Reveal() != key || !cfg.Temporal.TLSOn() {
		t.Fatalf(
			"api key %q, TLS %v: the test would prove nothing",
			cfg.Temporal.APIKey,
			cfg.Temporal.TLSOn(),
		)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "temporal", cfg.Temporal)
	js, _ := json.Marshal(cfg)
	in, err := BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inJSON, _ := json.Marshal(in)
	for name, out := range map[string]string{
		"%v":           fmt.Sprintf("%v", cfg),
		"%#v":          fmt.Sprintf("%#v", cfg),
		"temporal %+v": fmt.Sprintf("%+v", cfg.Temporal),
		"slog":         logged.String(),
		"json":         string(js),
		"BakeInput":    string(inJSON),
	} {
		if strings.Contains(out, key) {
			t.Errorf("%s shows the API key: %s", name, out)
		}
	}
	if !strings.Contains(fmt.Sprint(cfg), "temporal-auth=tls+api-key") {
		t.Errorf("the summary does not say how Temporal is secured: %v", cfg)
	}
	// From the environment too.
	t.Setenv(EnvName("temporal.api-key"), key)
	cfg, err = Load("", nil)
	if err != nil || cfg.Temporal.APIKey.Reveal() != key {
		t.Fatalf("WHESTBAKE_TEMPORAL_API_KEY not read: %v %v", cfg.Temporal.APIKey, err)
	}
	_, err = load(t, base+"temporal: {api-key: "+key+", tls: "+key+"}\n")
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("a library error shows the API key (or none came): %v", err)
	}
}

// Key files named in the config file are found next to it; paths from the
// environment are the caller's.
func TestKeyFilesRelativeToTheConfigFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	configText := strings.Replace(base, "s3:", "s3:\n  ca-file: s3/ca.pem", 1) +
		"temporal: {tls: {ca-file: ca.pem, cert-file: /abs/c.pem, key-file: k.pem}}\n"
	file := writeFile(t, dir, "c.yaml", configText)
	t.Setenv(EnvName("temporal.tls.key-file"), "env/k.pem")
	cfg, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := cfg.Temporal.TLS
	if tl.CAFile != filepath.Join(dir, "ca.pem") ||
		tl.CertFile != "/abs/c.pem" ||
		tl.KeyFile != "env/k.pem" ||
		cfg.S3.CAFile != filepath.Join(dir, "s3/ca.pem") {
		t.Errorf("paths: %+v, s3 ca %q", tl, cfg.S3.CAFile)
	}
}

// With no static keys, S3 credentials come from the AWS chain, and the
// summary says so.
func TestS3CredentialChain(t *testing.T) {
	noAccessKey := strings.Replace(base, "access-key: bakeuser", "", 1)
	cfg, err := load(t, strings.Replace(noAccessKey, "secret-key: "+testSecret, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("no static keys must be valid (the AWS chain): %v", err)
	}
	if !strings.Contains(fmt.Sprint(cfg), "credentials=aws-chain") {
		t.Errorf("summary: %v", cfg)
	}
}
