package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
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
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "s3", cfg.S3, "secret", cfg.S3.SecretKey)
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
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg),
		//lint:ignore S1025 the test is about what each verb prints, %s included
		"%s": fmt.Sprintf("%s", cfg), "&cfg %+v": fmt.Sprintf("%+v", &cfg),
		"s3 %+v": fmt.Sprintf("%+v", cfg.S3), "s3 %#v": fmt.Sprintf("%#v", cfg.S3),
		"secret %v": fmt.Sprint(cfg.S3.SecretKey), "secret %q": fmt.Sprintf("%q", cfg.S3.SecretKey),
		"slog": logged.String(), "json": string(js), "BakeInput": string(inJSON),
	}
	for name, out := range outputs {
		if strings.Contains(out, testSecret) {
			t.Errorf("%s shows the secret: %s", name, out)
		}
	}
	if !strings.Contains(outputs["%v"], "credentials=set") || !strings.Contains(outputs["s3 %+v"], "[redacted]") {
		t.Errorf("redacted output lost its meaning: %s / %s", outputs["%v"], outputs["s3 %+v"])
	}
}

// Library errors (viper, mapstructure) quote values; Load scrubs the secret from them.
func TestLoadErrorsScrubTheSecret(t *testing.T) {
	for _, bad := range []string{
		strings.Replace(base, "width: 8", "width: "+testSecret, 1),
		strings.Replace(base, "secret-key: "+testSecret, "secret-key: "+testSecret+"\n  secret_key: "+testSecret, 1),
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
