package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// TestServerCopy runs against one real MinIO: S3 copies the bytes, and
// nothing counts as copied that was not read back equal to the sha256 asked for.
func TestServerCopy(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	s, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	old := store.ServerCopyPartBytes
	store.ServerCopyPartBytes = 5 << 20 // S3's least part size: three parts below
	t.Cleanup(func() { store.ServerCopyPartBytes = old })
	data := make([]byte, 12<<20+123)
	_, _ = rand.Read(data)
	sum := store.SHA256Hex(data)
	if err := s.Put(ctx, "src/big", data); err != nil {
		t.Fatal(err)
	}

	t.Run("parts are copied on the server and read back", func(t *testing.T) {
		var mu sync.Mutex
		var lastCopied, lastChecked int64
		err := s.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/big", Src: s, SrcKey: "src/big", SHA256: sum, CreateOnly: true,
			Progress: func(copied, checked int64) {
				mu.Lock()
				defer mu.Unlock()
				if copied < lastCopied || checked < lastChecked {
					t.Errorf("progress went back: %d/%d after %d/%d",
						copied, checked, lastCopied, lastChecked)
				}
				lastCopied, lastChecked = copied, checked
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if lastCopied != int64(len(data)) || lastChecked != int64(len(data)) {
			t.Errorf("progress ended at %d copied, %d checked; want %d each",
				lastCopied, lastChecked, len(data))
		}
		mustEqual(t, s, "dst/big", data)
		if info, err := s.Stat(ctx, "dst/big"); err != nil || info.SHA256 != sum {
			t.Errorf("Stat = %+v, %v; want sha256 %s recorded", info, err, sum)
		}
	})

	t.Run("create-only copies never replace a taken key", func(t *testing.T) {
		if err := s.Put(ctx, "dst/taken", []byte("someone else's")); err != nil {
			t.Fatal(err)
		}
		err := s.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/taken", Src: s, SrcKey: "src/big", SHA256: sum, CreateOnly: true,
		})
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("copy onto a taken key: %v, want ErrExists", err)
		}
		mustGet(t, s, "dst/taken", "someone else's")
	})

	t.Run("a source unlike its recorded sha256 is refused before the copy", func(t *testing.T) {
		err := s.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/refused", Src: s, SrcKey: "src/big", SHA256: store.SHA256Hex([]byte("x")),
		})
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("copy under another sha256: %v, want ErrCorrupt", err)
		}
		if ok, err := s.Exists(ctx, "dst/refused"); ok || err != nil {
			t.Errorf("a refused copy left an object (%v)", err)
		}
	})

	t.Run("bytes rewritten under a kept sha256 are caught on the read back", func(t *testing.T) {
		// What a rewrite in the bucket looks like: other bytes, the
		// recorded sha256 of the old ones kept.
		raw, err := minio.New(cfg.Endpoint, &minio.Options{
			Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		})
		if err != nil {
			t.Fatal(err)
		}
		other := bytes.Repeat([]byte{7}, len(data))
		_, err = raw.PutObject(ctx, bucket, "src/rewritten", bytes.NewReader(other),
			int64(len(other)), minio.PutObjectOptions{UserMetadata: map[string]string{"sha256": sum}})
		if err != nil {
			t.Fatal(err)
		}
		err = s.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/rewritten", Src: s, SrcKey: "src/rewritten", SHA256: sum, CreateOnly: true,
		})
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("copy of rewritten bytes: %v, want ErrCorrupt", err)
		}
		if ok, err := s.Exists(ctx, "dst/rewritten"); ok || err != nil {
			t.Errorf("the copy that failed its check is still there (%v)", err)
		}
	})

	// S3 refuses a part cut from a source replaced since it was checked
	// (412 on x-amz-copy-source-if-match): that is a changed source, which
	// used to be reported as the destination being taken, and the copy
	// leaves nothing behind, not even its upload.
	t.Run("a source replaced mid-copy is said to have changed", func(t *testing.T) {
		// Five parts, one more than are copied at once.
		five := bytes.Repeat(data[:5<<20], 5)
		if err := s.Put(ctx, "src/replaced", five); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		err := s.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/replaced", Src: s, SrcKey: "src/replaced", SHA256: store.SHA256Hex(five),
			CreateOnly: true,
			Progress: func(copied, _ int64) {
				// After the first part, before the last can start.
				once.Do(func() {
					other := bytes.Clone(five)
					other[0] ^= 1
					if err := s.Put(ctx, "src/replaced", other); err != nil {
						t.Error(err)
					}
				})
			},
		})
		if !errors.Is(err, store.ErrSourceChanged) || errors.Is(err, store.ErrExists) {
			t.Fatalf("copy of a source replaced mid-copy: %v, want ErrSourceChanged", err)
		}
		if ok, err := s.Exists(ctx, "dst/replaced"); ok || err != nil {
			t.Errorf("a copy of a changed source left an object (%v)", err)
		}
		noUploads(t, cfg, bucket, "dst/replaced")
	})

	t.Run("the upload of a lost CreateMultipartUpload answer is aborted", func(t *testing.T) {
		proxy := devtest.StartFaultProxy(t, cfg.Endpoint)
		lost := false
		proxy.SetFault(func(r *http.Request) devtest.Fault {
			if _, create := r.URL.Query()["uploads"]; create && !lost {
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
		err = sv.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/lost", Src: sv, SrcKey: "src/big", SHA256: sum, CreateOnly: true,
		})
		if err != nil || !lost {
			t.Fatalf("copy after a lost answer: %v (an answer lost: %v)", err, lost)
		}
		mustEqual(t, s, "dst/lost", data)
		noUploads(t, cfg, bucket, "dst/lost")
	})

	t.Run("an empty object", func(t *testing.T) {
		if err := s.Put(ctx, "src/empty", nil); err != nil {
			t.Fatal(err)
		}
		err := s.ServerCopy(ctx, store.ServerCopyInput{
			Key: "dst/empty", Src: s, SrcKey: "src/empty", SHA256: store.SHA256Hex(nil),
			CreateOnly: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, s, "dst/empty", nil)
	})

	t.Run("Check reads the object", func(t *testing.T) {
		if err := s.Check(ctx, "src/big", sum, nil); err != nil {
			t.Errorf("Check of intact bytes: %v", err)
		}
		err := s.Check(ctx, "src/big", store.SHA256Hex([]byte("x")), nil)
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("Check under another sha256: %v, want ErrCorrupt", err)
		}
	})
}

func mustEqual(t *testing.T, s *store.Store, key string, want []byte) {
	t.Helper()
	got, err := s.Get(context.Background(), key)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Get(%s): %d bytes, %v; want the %d bytes copied", key, len(got), err, len(want))
	}
}
