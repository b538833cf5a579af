package tlsconf_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/tlsconf"
)

// The CA bundle, client certificate and key are files an operator names
// in the config: /dev/zero and a 100 MB file are refused with the cap in
// the message and the key that named them, without reading more than the
// cap.
func TestPEMFilesAreReadUnderACap(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.pem")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	k := tlsconf.Keys{
		Enable: "s3.tls",
		CA:     "s3.ca-file",
		Cert:   "s3.cert-file",
		Key:    "s3.key-file",
	}
	for _, file := range []string{"/dev/zero", big} {
		for _, files := range []tlsconf.Files{{CA: file}, {Cert: file, Key: file}} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := tlsconf.Client(files, k, time.Now())
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
				t.Errorf("%+v: %v; want the 4 MiB cap named", files, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 6*tlsconf.MaxPEMFileBytes {
				t.Errorf("%+v: allocated %d MiB", files, grew>>20)
			}
		}
	}
}
