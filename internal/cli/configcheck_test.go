package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/tlsconf/tlstest"
)

// `config check FILE` validates a config offline: a good one exits 0 and
// says what it was checked as; a bad one exits 1 listing every problem at
// once, from the values to the TLS material the files hold.
func TestConfigCheck(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "ca")
	good := ca.Issue(t, "client", tlstest.LeafOptions{})
	other := ca.Issue(t, "other", tlstest.LeafOptions{})
	expired := ca.Issue(t, "expired", tlstest.LeafOptions{
		NotBefore: time.Now().Add(-48 * time.Hour), Validity: time.Hour})
	config := func(name, cert, key, extra string) string {
		if extra == "" {
			extra = "worker: {scratch-dir: " + dir + "}"
		}
		return writeFile(t, filepath.Join(dir, name+".yaml"), fmt.Sprintf(`
temporal:
  address: temporal.internal:7233
  tls: {ca-file: %s, cert-file: %s, key-file: %s}
s3: {endpoint: "https://s3.internal:9000", ca-file: %s, bucket: whestbake}
%s`, ca.CAFile, cert, key, ca.CAFile, extra))
	}

	ok := config("good", good.CertFile, good.KeyFile, "")
	code, out, errs := run(t, "config", "check", ok, "--role", "control")
	if code != 0 || !strings.Contains(out, "valid for whestbake-worker --role control") {
		t.Errorf("a good config: exit %d\n%s%s", code, out, errs)
	}

	bad := config("bad", expired.CertFile, other.KeyFile, `
worker: {threads: -1, scratch-dir: `+filepath.Join(dir, "absent")+`}
bake:
  id: "bad id"
  width: 8
  depth: 2
  n-samples: 1000
  splits: [{name: public, n-mlps: 2, seeds-file: absent.json}]
`)
	code, out, errs = run(t, "config", "check", bad)
	for _, want := range []string{
		"temporal.tls.key-file", // another certificate's
		"worker.threads",
		"worker.scratch-dir",
		"bake.id",
		"bake.splits[0].seeds-file cannot be read",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("a bad config: stderr lacks %q\n%s", want, errs)
		}
	}
	if code != 1 || out != "" {
		t.Errorf("a bad config: exit %d, stdout %q, want 1 and nothing\n%s", code, out, errs)
	}

	late := config("expired", expired.CertFile, expired.KeyFile, "")
	if code, _, errs = run(t, "config", "check", late); code != 1 || !strings.Contains(errs, "expired") {
		t.Errorf("an expired client certificate: exit %d\n%s", code, errs)
	}
	typo := writeFile(t, filepath.Join(dir, "typo.yaml"), "worker:\n  treads: 2\n")
	if code, _, errs = run(t, "config", "check", typo); code != 1 || !strings.Contains(errs, "worker.threads") {
		t.Errorf("an unknown key: exit %d\n%s", code, errs)
	}
}
