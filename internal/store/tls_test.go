package store_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// TestTLS runs MinIO with a certificate from a private CA.
func TestTLS(t *testing.T) {
	o := devtest.Options(t)
	o.Buckets = []string{"tls"}
	o = devtest.StartMinIO(t, devtest.WithMinIOTLS(t, o))
	cfg := o.S3Config()
	ctx := context.Background()
	if !cfg.Secure || cfg.CAFile == "" {
		t.Fatalf("the TLS stack's config is not TLS: %v", cfg)
	}
	s, err := store.Open(ctx, cfg, "tls")
	if err != nil {
		t.Fatalf("TLS with the CA file: %v", err)
	}
	if err := s.Put(ctx, "a", []byte("over TLS")); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "a", "over TLS")

	// The CA file alone turns TLS on.
	c := cfg
	c.Secure = false
	if _, err := store.Open(ctx, c, "tls"); err != nil {
		t.Errorf("s3.ca-file without s3.secure: %v", err)
	}
	c = cfg
	c.CAFile = ""
	wantTLSErr(t, c, "signed by an authority this client does not trust", "s3.ca-file")
	c.Secure = false
	wantTLSErr(t, c, "speaks TLS and this client plain HTTP", "s3.secure: true")
	c = cfg
	c.CAFile = filepath.Join(t.TempDir(), "absent.pem")
	if _, err := store.Open(ctx, c, "tls"); err == nil ||
		!strings.Contains(err.Error(), "s3.ca-file cannot be read") {
		t.Errorf("missing CA file: %v", err)
	}
}

// TLS to a plain-HTTP server says so.
func TestTLSToPlainServer(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	cfg.Secure = true
	_, err := store.Open(context.Background(), cfg, bucket)
	if !errors.Is(err, store.ErrTLS) || !strings.Contains(err.Error(), "does not speak TLS") ||
		!strings.Contains(err.Error(), "s3.secure") {
		t.Errorf("TLS to a plain server: %v", err)
	}
}

func wantTLSErr(t *testing.T, cfg store.Config, want ...string) {
	t.Helper()
	_, err := store.Open(context.Background(), cfg, "tls")
	if !errors.Is(err, store.ErrTLS) {
		t.Fatalf("got %v, want ErrTLS", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v\ndoes not mention %q", err, w)
		}
	}
	assertNoSecret(t, cfg.SecretKey, []error{err})
}

// With no static keys the store takes credentials from the AWS chain: the
// environment, then the shared credentials file.
func TestCredentialChain(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ak, sk := cfg.AccessKey, cfg.SecretKey
	cfg.AccessKey = ""
	cfg.SecretKey = ""
	for _, k := range []string{
		"AWS_ACCESS_KEY_ID",
		"AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN",
		"AWS_ACCESS_KEY",
		"AWS_SECRET_KEY",
		"AWS_PROFILE",
	} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	ctx := context.Background()

	t.Run("environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", ak)
		t.Setenv("AWS_SECRET_ACCESS_KEY", sk)
		if _, err := store.Open(ctx, cfg, bucket); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("shared credentials file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "credentials")
		body := "[default]\n" +
			"aws_access_key_id = nobody\n" +
			"aws_secret_access_key = nothing-here\n" +
			"\n" +
			"[bake]\n" +
			"aws_access_key_id = " + ak + "\n" +
			"aws_secret_access_key = " + sk + "\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
		t.Setenv("AWS_PROFILE", "bake")
		if _, err := store.Open(ctx, cfg, bucket); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_PROFILE", "default")
		_, err := store.Open(ctx, cfg, bucket)
		if !errors.Is(err, store.ErrAuth) || !strings.Contains(err.Error(), "AWS_PROFILE") {
			t.Errorf("the wrong profile: %v, want ErrAuth naming the chain", err)
		}
	})
	t.Run("nothing found", func(t *testing.T) {
		_, err := store.Open(ctx, cfg, bucket)
		if err != nil && strings.Contains(err.Error(), "the credentials of the AWS chain") {
			t.Skip("this host has an IAM role (instance metadata answered), " +
				"so the chain is not empty here")
		}
		if !errors.Is(err, store.ErrAuth) ||
			!strings.Contains(err.Error(), "the AWS credential chain found none") {
			t.Errorf("no credentials anywhere: %v", err)
		}
	})
	t.Run("one key alone", func(t *testing.T) {
		c := cfg
		c.AccessKey = ak
		if _, err := store.Open(ctx, c, bucket); err == nil ||
			!strings.Contains(err.Error(), "set both") {
			t.Errorf("access key without secret: %v", err)
		}
	})
}

// TestAddressing checks which host and path each style puts a bucket in,
// on a listener that answers every request (no DNS for bucket.host here).
func TestAddressing(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	store.SetTestDial(func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	})
	defer store.SetTestDial(nil)
	for _, c := range []struct{ style, endpoint, want string }{
		{
			store.AddressingPath,
			"s3.example.test:9000",
			"HEAD s3.example.test:9000/bake-bucket/",
		},
		{
			store.AddressingVirtualHost,
			"s3.example.test:9000",
			"HEAD bake-bucket.s3.example.test:9000/",
		},
		{
			store.AddressingAuto,
			"s3.example.test:9000",
			"HEAD s3.example.test:9000/bake-bucket/",
		},
		{
			store.AddressingAuto,
			"s3.us-east-2.amazonaws.com",
			"HEAD bake-bucket.s3.dualstack.us-east-2.amazonaws.com/",
		},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		cfg := store.Config{
			Endpoint:   c.endpoint,
			AccessKey:  "ak",
			SecretKey:  "sk-secret",
			Region:     "us-east-2",
			Addressing: c.style,
		}
		if _, err := store.Open(context.Background(), cfg, "bake-bucket"); err != nil {
			t.Errorf("%s %s: %v", c.style, c.endpoint, err)
			continue
		}
		mu.Lock()
		if len(seen) == 0 || seen[len(seen)-1] != c.want {
			t.Errorf("%s %s: requests %q, want %q last", c.style, c.endpoint, seen, c.want)
		}
		mu.Unlock()
	}
	dns := store.Config{Endpoint: "h:1", Addressing: "dns"}
	if _, err := store.Open(context.Background(), dns, "b"); err == nil ||
		!strings.Contains(err.Error(), "s3.addressing") {
		t.Errorf("unknown addressing: %v", err)
	}
}

// A MinIO that has just started answers 503 to every key but the root's
// until its IAM is up, naming that in headers, the only place a HEAD has
// for them. Open waits for the server to finish starting; one that never
// does fails Open with what it said.
func TestServerStarting(t *testing.T) {
	var mu sync.Mutex
	unready, forever := 2, false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if forever || unready > 0 {
			unready--
			w.Header().Set("x-minio-error-code", "XMinioIAMNotInitialized")
			w.Header().Set("x-minio-error-desc", `"IAM sub-system not initialized yet, please try again."`)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cfg := store.Config{
		Endpoint:  srv.Listener.Addr().String(),
		AccessKey: "ak",
		SecretKey: "sk-secret",
		Region:    "us-east-1",
	}
	ctx := context.Background()
	if _, err := store.Open(ctx, cfg, "bake"); err != nil {
		t.Fatalf("Open of a server that finishes starting: %v", err)
	}
	mu.Lock()
	if unready != 0 {
		t.Errorf("Open returned with %d answers of a starting server unread", unready)
	}
	forever = true
	mu.Unlock()

	store.SetStartupWait(t, 300*time.Millisecond)
	_, err := store.Open(ctx, cfg, "bake")
	for _, want := range []string{"IAM sub-system not initialized yet", "still starting after 300ms"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open of a server that never starts: %v, want it to say %q", err, want)
		}
	}
	if errors.Is(err, store.ErrAuth) || errors.Is(err, store.ErrUnreachable) {
		t.Errorf("a starting server is neither rejected credentials nor unreachable: %v", err)
	}
}
