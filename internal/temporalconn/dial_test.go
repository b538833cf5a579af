package temporalconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/whestbake/whestbake/internal/tlsconf/tlstest"
)

// frontend answers the two calls Dial makes (GetSystemInfo, DescribeNamespace)
// over a real gRPC server with real TLS, so each misconfiguration meets the
// same handshake it would meet at a Temporal frontend. The full server with
// mutual TLS runs in e2e/production_test.go.
type frontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	namespace string
}

func (f *frontend) GetSystemInfo(
	context.Context,
	*workflowservice.GetSystemInfoRequest,
) (*workflowservice.GetSystemInfoResponse, error) {
	return &workflowservice.GetSystemInfoResponse{ServerVersion: "test"}, nil
}

func (f *frontend) DescribeNamespace(
	_ context.Context,
	r *workflowservice.DescribeNamespaceRequest,
) (*workflowservice.DescribeNamespaceResponse, error) {
	if r.GetNamespace() != f.namespace {
		return nil, serviceerror.ToStatus(serviceerror.NewNamespaceNotFound(r.GetNamespace())).Err()
	}
	return &workflowservice.DescribeNamespaceResponse{}, nil
}

// serve runs a frontend on a free loopback port: with TLS when tlsCfg is
// set, requiring "authorization: Bearer <apiKey>" when apiKey is set.
func serve(t *testing.T, tlsCfg *tls.Config, apiKey string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	if apiKey != "" {
		var checkKey grpc.UnaryServerInterceptor = func(
			ctx context.Context,
			req any,
			_ *grpc.UnaryServerInfo,
			h grpc.UnaryHandler,
		) (any, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+apiKey {
				return nil, status.Error(codes.Unauthenticated, "invalid API key")
			}
			return h(ctx, req)
		}
		opts = append(opts, grpc.UnaryInterceptor(checkKey))
	}
	s := grpc.NewServer(opts...)
	workflowservice.RegisterWorkflowServiceServer(s, &frontend{namespace: "bakes"})
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

// pki is a server CA with a server certificate for temporal.test, a client
// CA with a client certificate, and a rogue CA that nobody trusts.
type pki struct {
	dir                 string
	serverCA, clientCA  *tlstest.CA
	rogue               *tlstest.CA
	server, client, bad tlstest.Leaf
}

func newPKI(t *testing.T) *pki {
	p := &pki{dir: t.TempDir()}
	p.serverCA = tlstest.NewCA(t, p.dir, "server")
	p.clientCA = tlstest.NewCA(t, p.dir, "client")
	p.rogue = tlstest.NewCA(t, p.dir, "rogue")
	p.server = p.serverCA.Issue(
		t,
		"frontend",
		tlstest.LeafOptions{Server: true, Hosts: []string{"temporal.test"}},
	)
	p.client = p.clientCA.Issue(t, "worker", tlstest.LeafOptions{})
	p.bad = p.rogue.Issue(t, "intruder", tlstest.LeafOptions{})
	return p
}

// serverTLS is the frontend's side; mutual requires client certificates
// from the client CA.
func (p *pki) serverTLS(mutual bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{p.server.TLS}, MinVersion: tls.VersionTLS12}
	if mutual {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = p.clientCA.Pool()
	}
	return c
}

// envName stands for settings.EnvName, so that a test sees which key's
// variable a message names.
func envName(key string) string { return "env of " + key }

func cfg(addr string) Config {
	return Config{Address: addr, Namespace: "bakes", EnvName: envName}
}

func dial(t *testing.T, c Config) error {
	t.Helper()
	start := time.Now()
	cl, err := Dial(context.Background(), c, slog.New(slog.DiscardHandler))
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Dial took %s: a misconfiguration must fail fast", d)
	}
	if err == nil {
		cl.Close()
	}
	return err
}

// wantErr checks that err says every one of want (the key and the fix).
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one mentioning %q", want)
	}
	t.Log(err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	addr := serve(t, p.serverTLS(true), "")
	good := cfg(addr)
	good.TLS = TLS{
		CAFile:     p.serverCA.CAFile,
		ServerName: "temporal.test",
		CertFile:   p.client.CertFile,
		KeyFile:    p.client.KeyFile,
	}
	if err := dial(t, good); err != nil {
		t.Fatalf("mutual TLS with the right files: %v", err)
	}

	t.Run("unknown CA", func(t *testing.T) {
		c := good
		c.TLS.CAFile = ""
		wantErr(
			t,
			dial(t, c),
			"signed by an authority this client does not trust",
			"set temporal.tls.ca-file",
		)
		c.TLS.CAFile = p.rogue.CAFile
		wantErr(t, dial(t, c), "does not trust", "temporal.tls.ca-file")
	})
	t.Run("wrong server name", func(t *testing.T) {
		c := good
		c.TLS.ServerName = "frontend.example"
		wantErr(
			t,
			dial(t, c),
			"certificate is for temporal.test",
			`not "frontend.example"`,
			"set temporal.tls.server-name",
		)
		c.TLS.ServerName = "" // the address's host, 127.0.0.1
		wantErr(t, dial(t, c), "certificate is for temporal.test", "temporal.tls.server-name")
	})
	t.Run("no client certificate", func(t *testing.T) {
		c := good
		c.TLS.CertFile = ""
		c.TLS.KeyFile = ""
		wantErr(
			t,
			dial(t, c),
			"requires a client certificate",
			"temporal.tls.cert-file",
			"temporal.tls.key-file",
		)
	})
	t.Run("client certificate from another CA", func(t *testing.T) {
		c := good
		c.TLS.CertFile = p.bad.CertFile
		c.TLS.KeyFile = p.bad.KeyFile
		wantErr(
			t,
			dial(t, c),
			"rejected the client certificate in temporal.tls.cert-file",
			"CA the server trusts",
		)
	})
	t.Run("plain text to a TLS port", func(t *testing.T) {
		wantErr(
			t,
			dial(t, cfg(addr)),
			"speaks TLS and this client plain text",
			"temporal.tls.enabled: true",
			envName("temporal.tls.enabled"),
		)
	})
	t.Run("wrong namespace", func(t *testing.T) {
		c := good
		c.Namespace = "bake"
		wantErr(t, dial(t, c), `has no namespace "bake"`, "temporal.namespace")
	})
}

// TLS settings that can be checked before connecting fail in validation,
// each under its key.
func TestClientFilesChecked(t *testing.T) {
	p := newPKI(t)
	expired := p.clientCA.Issue(
		t,
		"expired",
		tlstest.LeafOptions{NotBefore: time.Now().Add(-48 * time.Hour), Validity: time.Hour},
	)
	notYet := p.clientCA.Issue(
		t,
		"future",
		tlstest.LeafOptions{NotBefore: time.Now().Add(48 * time.Hour)},
	)
	garbage := filepath.Join(p.dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tls  TLS
		want []string
	}{
		{
			"expired",
			TLS{CertFile: expired.CertFile, KeyFile: expired.KeyFile},
			[]string{"temporal.tls.cert-file", "expired on", "issue a new client certificate"},
		},
		{
			"not yet valid",
			TLS{CertFile: notYet.CertFile, KeyFile: notYet.KeyFile},
			[]string{"temporal.tls.cert-file", "not valid before", "clock"},
		},
		{
			"mismatched key",
			TLS{CertFile: p.client.CertFile, KeyFile: p.bad.KeyFile},
			[]string{"temporal.tls.key-file", "is not the private key of the certificate"},
		},
		{
			"bad key",
			TLS{CertFile: p.client.CertFile, KeyFile: garbage},
			[]string{"temporal.tls.key-file", "holds no PEM private key"},
		},
		{
			"key as cert",
			TLS{CertFile: p.client.KeyFile, KeyFile: p.client.KeyFile},
			[]string{"temporal.tls.cert-file", "holds no PEM certificate"},
		},
		{
			"cert without key",
			TLS{CertFile: p.client.CertFile},
			[]string{"temporal.tls.key-file is empty", "needs both"},
		},
		{
			"missing CA file",
			TLS{CAFile: filepath.Join(p.dir, "absent.pem")},
			[]string{"temporal.tls.ca-file cannot be read"},
		},
		{
			"CA file without certificates",
			TLS{CAFile: garbage},
			[]string{"temporal.tls.ca-file", "holds no PEM certificate"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := Config{
				Address:   "127.0.0.1:1",
				Namespace: "x",
				TLS:       c.tls,
				EnvName:   envName,
			}
			_, err := bad.ClientTLS()
			wantErr(t, err, c.want...)
			// Dial refuses the same files without touching the network.
			wantErr(t, dial(t, bad), c.want[0])
		})
	}
}

func TestServerTLSWithoutClientCertificates(t *testing.T) {
	p := newPKI(t)
	addr := serve(t, p.serverTLS(false), "")
	c := cfg(addr)
	c.TLS = TLS{CAFile: p.serverCA.CAFile, ServerName: "temporal.test"}
	if err := dial(t, c); err != nil {
		t.Fatalf("server-only TLS: %v", err)
	}
	// TLS to a plain-text port.
	plain := serve(t, nil, "")
	c.Address = plain
	wantErr(t, dial(t, c), "does not speak TLS on this port", "temporal.tls")
}

// A frontend whose own certificate expired: the message says whose
// certificate it is, so nobody reissues the client's.
func TestExpiredServerCertificate(t *testing.T) {
	p := newPKI(t)
	old := p.serverCA.Issue(
		t,
		"old-frontend",
		tlstest.LeafOptions{
			Server:    true,
			Hosts:     []string{"temporal.test"},
			NotBefore: time.Now().Add(-48 * time.Hour),
			Validity:  time.Hour,
		},
	)
	addr := serve(t, &tls.Config{Certificates: []tls.Certificate{old.TLS}}, "")
	c := cfg(addr)
	c.TLS = TLS{CAFile: p.serverCA.CAFile, ServerName: "temporal.test"}
	wantErr(
		t,
		dial(t, c),
		"the server's certificate is expired or not yet valid",
		"renew the server's certificate",
	)
}

func TestAPIKey(t *testing.T) {
	const key = "tmprl-key-Zx81-never-print"
	p := newPKI(t)
	addr := serve(t, p.serverTLS(false), key)
	c := cfg(addr)
	c.TLS = TLS{CAFile: p.serverCA.CAFile, ServerName: "temporal.test"}
	c.APIKey = key
	if err := dial(t, c); err != nil {
		t.Fatalf("the right API key: %v", err)
	}
	c.APIKey = "tmprl-old-key-Qq7-never-print"
	err := dial(t, c)
	wantErr(t, err, "rejected temporal.api-key", envName("temporal.api-key"))
	if strings.Contains(err.Error(), c.APIKey) {
		t.Errorf("the error shows the key: %v", err)
	}
	c.APIKey = ""
	wantErr(t, dial(t, c), "wants credentials", "temporal.api-key")

	// An API key alone turns TLS on (it must never travel in plain text):
	// the handshake, not the key, is what fails here.
	only := cfg(addr)
	only.APIKey = key
	if tc, err := only.ClientTLS(); err != nil || tc == nil {
		t.Fatalf("an API key without TLS settings: TLS config %v, %v", tc, err)
	}
	wantErr(t, dial(t, only), "the server's certificate", "temporal.tls.")
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	wantErr(t, dial(t, cfg(addr)), "cannot connect to Temporal at "+addr, "fix temporal.address")
}

// The test CA files are what the operator would mount; make sure the
// server CA really is the one that signed the server certificate, so the
// unknown-CA test fails for the right reason.
func TestPKISanity(t *testing.T) {
	p := newPKI(t)
	leaf, err := x509.ParseCertificate(p.server.TLS.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: p.serverCA.Pool(), DNSName: "temporal.test"}
	if _, err := leaf.Verify(opts); err != nil {
		t.Fatal(err)
	}
}
