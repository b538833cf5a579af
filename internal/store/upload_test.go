package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// TestUpload runs against one real MinIO: an object written while its
// bytes are produced holds exactly those bytes once closed, and nothing
// before, or ever when it is given up.
func TestUpload(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	s, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	store.SetUploadPartBytes(t, 5<<20)
	data := make([]byte, 23<<20+77) // four full parts and a short one
	_, _ = rand.Read(data)
	// write is what a writer does behind the Upload: the bytes go to the
	// file first, then to the Upload, in chunks that straddle the parts.
	write := func(t *testing.T, u *store.Upload, f *os.File, data []byte) {
		t.Helper()
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 999_983)
			if _, err := io.MultiWriter(f, u).Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
	}
	newFile := func(t *testing.T) *os.File {
		f, err := os.Create(filepath.Join(t.TempDir(), "file"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}

	t.Run("parts in the background, the object at Close", func(t *testing.T) {
		f := newFile(t)
		u, err := s.NewUpload(ctx, "up/big", f.Name())
		if err != nil {
			t.Fatal(err)
		}
		write(t, u, f, data)
		if ok, _ := s.Exists(ctx, "up/big"); ok {
			t.Fatal("the object exists before Close")
		}
		info, err := u.Close()
		if err != nil {
			t.Fatal(err)
		}
		if info != (store.Info{Size: int64(len(data)), SHA256: store.SHA256Hex(data)}) {
			t.Errorf("Close = %+v, want the size and sha256 of the bytes written", info)
		}
		mustEqual(t, s, "up/big", data)
		u.Abort() // after Close: nothing happens
		mustEqual(t, s, "up/big", data)
	})

	t.Run("an empty object", func(t *testing.T) {
		u, err := s.NewUpload(ctx, "up/empty", newFile(t).Name())
		if err != nil {
			t.Fatal(err)
		}
		if info, err := u.Close(); err != nil || info.Size != 0 {
			t.Fatalf("Close = %+v, %v", info, err)
		}
		mustEqual(t, s, "up/empty", nil)
	})

	t.Run("given up, it leaves nothing", func(t *testing.T) {
		f := newFile(t)
		u, err := s.NewUpload(ctx, "up/abandoned", f.Name())
		if err != nil {
			t.Fatal(err)
		}
		write(t, u, f, data)
		u.Abort()
		if ok, err := s.Exists(ctx, "up/abandoned"); ok || err != nil {
			t.Errorf("an abandoned upload left an object (%v)", err)
		}
		noUploads(t, cfg, bucket, "up/abandoned")
	})

	t.Run("a cancelled upload fails and leaves nothing", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		f := newFile(t)
		u, err := s.NewUpload(cctx, "up/cancelled", f.Name())
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		_, werr := io.MultiWriter(f, u).Write(data)
		_, cerr := u.Close()
		if werr == nil && cerr == nil {
			t.Fatal("an upload whose context was cancelled completed")
		}
		if err := errors.Join(werr, cerr); !errors.Is(err, context.Canceled) {
			t.Errorf("errors %v, want them to say the context was cancelled", err)
		}
		if ok, err := s.Exists(ctx, "up/cancelled"); ok || err != nil {
			t.Errorf("a cancelled upload left an object (%v)", err)
		}
		noUploads(t, cfg, bucket, "up/cancelled")
	})

	// A writer killed mid-upload leaves its upload open, and so does a
	// CreateMultipartUpload whose answer was lost: the client asks again
	// and gets a second upload. The next upload of the key to complete
	// aborts both; they used to keep their parts for good.
	t.Run("the uploads a killed writer and a lost answer left are aborted", func(t *testing.T) {
		killed, err := s.NewUpload(ctx, "up/again", newFile(t).Name())
		if err != nil {
			t.Fatal(err)
		}
		f := newFile(t)
		write(t, killed, f, data[:6<<20]) // a part is up; then the writer dies
		proxy := devtest.StartFaultProxy(t, cfg.Endpoint)
		lost := false
		proxy.SetFault(func(r *http.Request) devtest.Fault {
			_, create := r.URL.Query()["uploads"]
			if create && r.Method == http.MethodPost && !lost {
				lost = true
				return devtest.Fault{LoseAnswer: true}
			}
			return devtest.Fault{}
		})
		via := cfg
		via.Endpoint = proxy.Addr
		sv, err := store.Open(ctx, via, bucket)
		if err != nil {
			t.Fatal(err)
		}
		f = newFile(t)
		u, err := sv.NewUpload(ctx, "up/again", f.Name())
		if err != nil {
			t.Fatal(err)
		}
		write(t, u, f, data)
		if _, err := u.Close(); err != nil {
			t.Fatal(err)
		}
		if !lost {
			t.Fatal("the test lost no answer")
		}
		mustEqual(t, s, "up/again", data)
		noUploads(t, cfg, bucket, "up/again")
	})

	t.Run("AbortUploads aborts those under its prefix alone", func(t *testing.T) {
		for _, key := range []string{"gone/a/1", "gone/a/b/2", "gone/ab", "kept/a/3"} {
			// Left open, as by a crash.
			if _, err := s.NewUpload(ctx, key, newFile(t).Name()); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.AbortUploads(ctx, "gone/a/")
		if err != nil || n != 2 {
			t.Fatalf("AbortUploads = %d, %v; want the 2 uploads under gone/a/", n, err)
		}
		noUploads(t, cfg, bucket, "gone/a/")
		for _, key := range []string{"gone/ab", "kept/a/3"} {
			if left := leftUploads(t, cfg, bucket, key); len(left) != 1 {
				t.Errorf("uploads of %s: %v, want it kept", key, left)
			}
		}
	})
}

// leftUploads lists the incomplete multipart uploads of bucket whose keys
// begin with prefix, as another S3 client sees them (MinIO lists a
// folder's only as part of the whole bucket's).
func leftUploads(t *testing.T, cfg store.Config, bucket, prefix string) []string {
	t.Helper()
	raw, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Region: cfg.Region,
	})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for u := range raw.ListIncompleteUploads(context.Background(), bucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		if strings.HasPrefix(u.Key, prefix) {
			left = append(left, u.Key)
		}
	}
	return left
}

// noUploads fails if an incomplete upload of bucket begins with prefix.
func noUploads(t *testing.T, cfg store.Config, bucket, prefix string) {
	t.Helper()
	if left := leftUploads(t, cfg, bucket, prefix); len(left) > 0 {
		t.Errorf("incomplete uploads left under %s: %v", prefix, left)
	}
}
