package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

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
	})
}
