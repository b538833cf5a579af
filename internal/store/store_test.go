package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/sync/errgroup"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// TestStore runs against one real MinIO; each subtest uses its own keys.
func TestStore(t *testing.T) {
	cfg, bucket := devtest.StartStore(t)
	ctx := context.Background()
	s, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if s.Bucket() != bucket {
		t.Fatalf("Bucket() = %q, want %q", s.Bucket(), bucket)
	}
	var errs []error // every error seen, checked for the secret at the end
	t.Cleanup(func() { assertNoSecret(t, cfg.SecretKey, errs) })

	t.Run("create-only", func(t *testing.T) {
		if err := s.PutCreate(ctx, "create/a", []byte("first")); err != nil {
			t.Fatal(err)
		}
		err := s.PutCreate(ctx, "create/a", []byte("second"))
		errs = append(errs, err)
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("second PutCreate: got %v, want ErrExists", err)
		}
		mustGet(t, s, "create/a", "first")
		if err := s.Put(ctx, "create/a", []byte("third")); err != nil {
			t.Fatalf("Put over an existing key: %v", err)
		}
		mustGet(t, s, "create/a", "third")
	})

	t.Run("stat records sha256", func(t *testing.T) {
		if err := s.Put(ctx, "stat/abc", []byte("abc")); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(ctx, "stat/abc")
		if err != nil {
			t.Fatal(err)
		}
		// FIPS 180-2 example: SHA-256("abc").
		want := store.Info{
			Size:   3,
			SHA256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		}
		if info != want {
			t.Fatalf("Stat = %+v, want %+v", info, want)
		}
	})

	t.Run("not found", func(t *testing.T) {
		_, err := s.Get(ctx, "missing/x")
		errs = append(errs, err)
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get missing: got %v, want ErrNotFound", err)
		}
		_, err = s.Stat(ctx, "missing/x")
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Stat missing: got %v, want ErrNotFound", err)
		}
		ok, err := s.Exists(ctx, "missing/x")
		if ok || err != nil {
			t.Fatalf("Exists missing = %v, %v; want false, nil", ok, err)
		}
		path := filepath.Join(t.TempDir(), "x")
		if _, err := s.GetFile(ctx, "missing/x", path, 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetFile missing: got %v, want ErrNotFound", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("GetFile of a missing key left %s behind", path)
		}
	})

	t.Run("list order", func(t *testing.T) {
		put := []string{
			"list/b/2",
			"list/a",
			"list/b/10",
			"list/B",
			"list/c/1",
			"lists/x",
			"list/b/1",
		}
		for _, k := range put {
			if err := s.PutCreate(ctx, k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.List(ctx, "list/")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"list/B", "list/a", "list/b/1", "list/b/10", "list/b/2", "list/c/1"}
		if !slices.Equal(got, want) {
			t.Fatalf("List = %q, want %q", got, want)
		}
		if got, _ := s.List(ctx, "nothing/"); len(got) != 0 {
			t.Fatalf("List of an empty prefix = %q", got)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.Put(ctx, "del/x", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "del/x"); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Exists(ctx, "del/x"); ok || err != nil {
			t.Fatalf("Exists after Delete = %v, %v", ok, err)
		}
		if err := s.Delete(ctx, "del/x"); err != nil {
			t.Fatalf("Delete of a missing key: %v", err)
		}
	})

	t.Run("delete prefix", func(t *testing.T) {
		// More keys than one bulk request takes, deleted as they are listed;
		// the kept ones and the neighbouring folder survive.
		const n = 2_500
		putMany(t, s, "dp/a/%04d", n, []byte("xy"))
		if err := s.Put(ctx, "dp/ab", []byte("neighbour")); err != nil {
			t.Fatal(err)
		}
		keep := func(key string) bool { return strings.HasSuffix(key, "7") }
		gone, err := s.DeletePrefix(ctx, "dp/a/", keep)
		if err != nil {
			t.Fatal(err)
		}
		if want := (store.Tally{Objects: n * 9 / 10, Bytes: 2 * n * 9 / 10}); gone != want {
			t.Errorf("DeletePrefix removed %+v, want %+v", gone, want)
		}
		left, err := s.List(ctx, "dp/")
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != n/10+1 || left[len(left)-1] != "dp/ab" {
			t.Errorf(
				"left %d keys ending with %q, want the %d kept and dp/ab",
				len(left),
				left[len(left)-1],
				n/10,
			)
		}
		for _, k := range left[:len(left)-1] {
			if !keep(k) {
				t.Errorf("%s outlived DeletePrefix", k)
			}
		}
	})

	t.Run("delete in checked batches", func(t *testing.T) {
		// Each bulk request runs through Batch, which may stop the
		// deletion between two of them: what went before is reported.
		const n = 2_100
		putMany(t, s, "db/%04d", n, []byte("x"))
		refused := errors.New("the lock is gone")
		var batches int
		gone, err := s.DeleteWhere(
			ctx,
			store.Deletion{
				Prefix: "db/",
				Batch: func(ctx context.Context, remove func(context.Context) error) error {
					if batches++; batches == 3 {
						return refused
					}
					return remove(ctx)
				},
			},
		)
		if !errors.Is(err, refused) || gone != (store.Tally{Objects: 2_000, Bytes: 2_000}) {
			t.Errorf(
				"DeleteWhere stopped at the third batch: %+v, %v; "+
					"want two batches of 1,000 and the refusal",
				gone,
				err,
			)
		}
		if left, err := s.List(ctx, "db/"); err != nil || len(left) != n-2_000 {
			t.Errorf("%d keys left (%v), want %d", len(left), err, n-2_000)
		}
	})

	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "src.bin")
		// Over minio-go's 16 MiB part size, so this goes up as a multipart
		// upload, whose create-only check happens at completion.
		data := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16)
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.PutCreateFile(ctx, "files/big", src); err != nil {
			t.Fatal(err)
		}
		err := s.PutCreateFile(ctx, "files/big", src)
		errs = append(errs, err)
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("second PutCreateFile: got %v, want ErrExists", err)
		}
		sum, err := store.FileSHA256(src)
		if err != nil {
			t.Fatal(err)
		}
		if info, err := s.Stat(ctx, "files/big"); err != nil || info.SHA256 != sum ||
			info.Size != int64(len(data)) {
			t.Fatalf("Stat = %+v, %v; want size %d sha256 %s", info, err, len(data), sum)
		}
		dst := filepath.Join(dir, "sub", "dst.bin")
		if got, err := s.GetFile(ctx, "files/big", dst, int64(len(data))); err != nil ||
			got != (store.Info{Size: int64(len(data)), SHA256: sum}) {
			t.Fatalf("GetFile = %+v, %v; want size %d sha256 %s", got, err, len(data), sum)
		}
		got, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("GetFile content differs (err %v)", err)
		}
		if _, err := s.PutFile(ctx, "files/small", writeTemp(t, "v1")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutFile(ctx, "files/small", writeTemp(t, "v2")); err != nil {
			t.Fatal(err)
		}
		mustGet(t, s, "files/small", "v2")
		entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
		if len(entries) != 1 {
			t.Fatalf("GetFile left temporary files: %v", entries)
		}
	})

	t.Run("corrupt object", func(t *testing.T) {
		// Another writer records a sha256 that does not match the bytes.
		raw, err := minio.New(
			cfg.Endpoint,
			&minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")},
		)
		if err != nil {
			t.Fatal(err)
		}
		body := []byte("tampered")
		_, err = raw.PutObject(
			ctx,
			bucket,
			"corrupt/x",
			bytes.NewReader(body),
			int64(len(body)),
			minio.PutObjectOptions{
				UserMetadata: map[string]string{"sha256": store.SHA256Hex([]byte("original"))},
			},
		)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Get(ctx, "corrupt/x")
		errs = append(errs, err)
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("Get: got %v, want ErrCorrupt", err)
		}
		path := filepath.Join(t.TempDir(), "x")
		_, err = s.GetFile(ctx, "corrupt/x", path, int64(len(body)))
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("GetFile: got %v, want ErrCorrupt", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatal("GetFile of a corrupt object wrote the file")
		}
	})

	t.Run("copy", func(t *testing.T) {
		raw, err := minio.New(
			cfg.Endpoint,
			&minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")},
		)
		if err != nil {
			t.Fatal(err)
		}
		// Small objects go up in one PUT, large ones (over minio-go's 16 MiB
		// part size) in parts: the check must hold back the last byte in both.
		small := []byte("copied bytes")
		big := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16)
		for name, data := range map[string][]byte{"small": small, "big": big} {
			src, dst := "copy/src-"+name, "copy/dst-"+name
			sum := store.SHA256Hex(data)
			if err := s.Put(ctx, src, data); err != nil {
				t.Fatal(err)
			}
			if err := s.CopyCreate(ctx, dst, s, src, sum, nil); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, err := s.Get(ctx, dst); err != nil || !bytes.Equal(got, data) {
				t.Fatalf(
					"%s: copy reads back %d bytes (%v), want %d",
					name,
					len(got),
					err,
					len(data),
				)
			}
			if err := s.CopyCreate(ctx, dst, s, src, sum, nil); !errors.Is(err, store.ErrExists) {
				t.Fatalf("%s: second copy: got %v, want ErrExists", name, err)
			}
			// The manifest expects other bytes than the source records.
			otherSum := store.SHA256Hex([]byte("other"))
			err := s.CopyCreate(ctx, dst+"-other", s, src, otherSum, nil)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("%s: copy against another sha256: got %v, want ErrCorrupt", name, err)
			}
			// The source records the expected sha256 but holds other bytes
			// (damaged at rest): refused while streaming, nothing written.
			tampered := bytes.Clone(data)
			tampered[len(tampered)-1] ^= 1
			recorded := minio.PutObjectOptions{UserMetadata: map[string]string{"sha256": sum}}
			body := bytes.NewReader(tampered)
			_, err = raw.PutObject(ctx, bucket, src+"-tampered", body, body.Size(), recorded)
			if err != nil {
				t.Fatal(err)
			}
			err = s.CopyCreate(ctx, dst+"-tampered", s, src+"-tampered", sum, nil)
			errs = append(errs, err)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("%s: copy of damaged bytes: got %v, want ErrCorrupt", name, err)
			}
			if ok, err := s.Exists(ctx, dst+"-tampered"); ok || err != nil {
				t.Fatalf("%s: a refused copy left an object (exists %v, %v)", name, ok, err)
			}
		}
	})

	t.Run("copy progress and cancellation", func(t *testing.T) {
		// Larger than a part, so the upload is a multipart one.
		data := bytes.Repeat([]byte("fedcba9876543210"), (33<<20)/16)
		sum := store.SHA256Hex(data)
		if err := s.Put(ctx, "progress/src", data); err != nil {
			t.Fatal(err)
		}
		var seen []int64
		progress := func(n int64) { seen = append(seen, n) }
		if err := s.CopyCreate(ctx, "progress/dst", s, "progress/src", sum, progress); err != nil {
			t.Fatal(err)
		}
		if len(seen) < 2 || seen[len(seen)-1] != int64(len(data)) || !slices.IsSorted(seen) {
			t.Fatalf(
				"progress reported %d times, last %v: "+
					"want growing counts up to %d while the copy runs",
				len(seen),
				seen[len(seen)-1:],
				len(data),
			)
		}
		// An attempt whose context is cancelled mid-copy (a timed-out
		// activity) stops, and leaves nothing behind.
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		start := time.Now()
		err := s.CopyCreate(cctx, "progress/cancelled", s, "progress/src", sum, func(n int64) {
			if n >= 1<<20 {
				cancel()
			}
		})
		errs = append(errs, err)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("copy cancelled after 1 MiB: got %v, want context.Canceled", err)
		}
		if ok, err := s.Exists(ctx, "progress/cancelled"); ok || err != nil {
			t.Fatalf("a cancelled copy left an object (exists %v, %v)", ok, err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the cancelled copy took %s to stop", took)
		}
	})

	t.Run("missing bucket", func(t *testing.T) {
		_, err := store.Open(ctx, cfg, "no-such-bucket")
		errs = append(errs, err)
		if !errors.Is(err, store.ErrNoBucket) ||
			!strings.Contains(err.Error(), `"no-such-bucket"`) {
			t.Fatalf("Open: got %v, want ErrNoBucket naming the bucket", err)
		}
		if _, err := s.WithBucket(ctx, "no-such-bucket"); !errors.Is(err, store.ErrNoBucket) {
			t.Fatalf("WithBucket: got %v, want ErrNoBucket", err)
		}
		if err := store.EnsureBucket(ctx, cfg, "made-later"); err != nil {
			t.Fatal(err)
		}
		if err := store.EnsureBucket(ctx, cfg, "made-later"); err != nil {
			t.Fatalf("EnsureBucket of an existing bucket: %v", err)
		}
		other, err := s.WithBucket(ctx, "made-later")
		if err != nil {
			t.Fatal(err)
		}
		if err := other.PutCreate(ctx, "create/a", []byte("other bucket")); err != nil {
			t.Fatalf("the same key in another bucket: %v", err)
		}
		mustGet(t, s, "create/a", "third")
	})

	t.Run("wrong credentials", func(t *testing.T) {
		bad := cfg
		bad.SecretKey = "wrong-secret-0123456789"
		_, err := store.Open(ctx, bad, bucket)
		if !errors.Is(err, store.ErrAuth) {
			t.Fatalf("Open: got %v, want ErrAuth", err)
		}
		for _, hint := range []string{"WHESTBAKE_S3_ACCESS_KEY", "WHESTBAKE_S3_SECRET_KEY"} {
			if !strings.Contains(err.Error(), hint) {
				t.Errorf("ErrAuth message %q does not name %s", err, hint)
			}
		}
		err2 := store.EnsureBucket(ctx, bad, "whatever")
		if !errors.Is(err2, store.ErrAuth) {
			t.Fatalf("EnsureBucket: got %v, want ErrAuth", err2)
		}
		assertNoSecret(t, bad.SecretKey, []error{err, err2})
		errs = append(errs, err, err2)
	})
}

func TestUnreachable(t *testing.T) {
	cfg := store.Config{
		Endpoint:  fmt.Sprintf("127.0.0.1:%d", devtest.FreePorts(t, 1)[0]),
		AccessKey: "whestbake",
		SecretKey: "unreachable-secret-42",
	}
	start := time.Now()
	_, err := store.Open(context.Background(), cfg, "bucket")
	if !errors.Is(err, store.ErrUnreachable) {
		t.Fatalf("Open: got %v, want ErrUnreachable", err)
	}
	// A refused connection must not go through the client's retry loop.
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Open took %s to report a refused connection", d)
	}
	for _, want := range []string{cfg.Endpoint, "whestbake dev up", "s3.endpoint"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
	assertNoSecret(t, cfg.SecretKey, []error{err})
}

func TestConfigHidesSecret(t *testing.T) {
	cfg := store.Config{Endpoint: "127.0.0.1:9000", AccessKey: "ak", SecretKey: "hunter2-secret"}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("open", "s3", cfg)
	for _, out := range []string{
		fmt.Sprint(cfg),
		fmt.Sprintf("%+v", cfg),
		fmt.Sprintf("%#v", cfg),
		cfg.String(),
		logged.String(),
	} {
		if strings.Contains(out, cfg.SecretKey) {
			t.Errorf("secret printed: %s", out)
		}
		if !strings.Contains(out, cfg.Endpoint) {
			t.Errorf("endpoint missing: %s", out)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []struct{ endpoint, want string }{
		{"", "no S3 endpoint"},
		{"http://127.0.0.1:9000/path", "without a path"},
	} {
		_, err := store.Open(context.Background(), store.Config{Endpoint: c.endpoint}, "bucket")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("endpoint %q: got %v, want an error containing %q", c.endpoint, err, c.want)
		}
	}
	_, err := store.Open(context.Background(), store.Config{Endpoint: "127.0.0.1:1"}, "Bad_Bucket")
	if err == nil || !strings.Contains(err.Error(), `"Bad_Bucket"`) {
		t.Errorf("bad bucket name: got %v", err)
	}
}

func TestSHA256(t *testing.T) {
	// FIPS 180-2 examples.
	for in, want := range map[string]string{
		"":    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq": "248d6a61d20638b8e5c026930c" +
			"3e6039a33ce45964ff2167f6ecedd419db06c1",
	} {
		if got := store.SHA256Hex([]byte(in)); got != want {
			t.Errorf("SHA256Hex(%q) = %s, want %s", in, got, want)
		}
		got, err := store.FileSHA256(writeTemp(t, in))
		if err != nil || got != want {
			t.Errorf("FileSHA256(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := store.FileSHA256(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("FileSHA256 of a missing file: no error")
	}
}

func mustGet(t *testing.T, s *store.Store, key, want string) {
	t.Helper()
	got, err := s.Get(context.Background(), key)
	if err != nil || string(got) != want {
		t.Fatalf("Get(%s) = %q, %v; want %q", key, got, err, want)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func assertNoSecret(t *testing.T, secret string, errs []error) {
	t.Helper()
	for _, err := range errs {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("error contains the secret: %v", err)
		}
	}
}

// putMany puts data at the n keys fmt.Sprintf(format, i), 16 at a time.
func putMany(t *testing.T, s *store.Store, format string, n int, data []byte) {
	t.Helper()
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error { return s.Put(ctx, fmt.Sprintf(format, i), data) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
