package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/minio/minio-go/v7"
)

// PutCreate writes data at key only if nothing is there yet, by If-None-Match: *,
// so that of two attempts writing the same deterministic key exactly one
// wins. A taken key gives an error wrapping ErrExists. Because the client
// retries, a write whose reply was lost also reports ErrExists; callers that
// must tell the two apart compare Stat(key).SHA256 with SHA256Hex(data).
func (s *Store) PutCreate(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, "create", key, bytes.NewReader(data), int64(len(data)), SHA256Hex(data), true)
}

// PutCreateFile is PutCreate with the content read from the file at path.
func (s *Store) PutCreateFile(ctx context.Context, key, path string) error {
	_, err := s.putFile(ctx, "create", key, path, true)
	return err
}

// Put writes data at key, replacing what is there. Use it only where every
// writer of the key writes the same bytes, as with deterministic outputs, or
// where the latest write should win, as with checkpoints.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, "put", key, bytes.NewReader(data), int64(len(data)), SHA256Hex(data), false)
}

// PutFile is Put with the content read from the file at path. It returns
// the size and sha256 of the bytes it sent, so that a caller listing them
// in a manifest need not read the file once more.
func (s *Store) PutFile(ctx context.Context, key, path string) (Info, error) {
	return s.putFile(ctx, "put", key, path, false)
}

// putFile hashes the file and uploads it through one open descriptor, so
// the recorded sha256 describes the bytes sent. Passing the real size keeps
// minio-go from reserving a part buffer for a 5 TiB object.
func (s *Store) putFile(ctx context.Context, op, key, path string, createOnly bool) (Info, error) {
	fail := func(err error) (Info, error) {
		return Info{}, fmt.Errorf("store: %s %s/%s from %s: %w", op, s.bucket, key, path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	sum, err := readerSHA256(f, path)
	if err != nil {
		return Info{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	info := Info{Size: st.Size(), SHA256: sum}
	return info, s.put(ctx, op, key, f, st.Size(), sum, createOnly)
}

func (s *Store) put(
	ctx context.Context,
	op, key string,
	r io.Reader,
	size int64,
	sum string,
	createOnly bool,
) error {
	opts := minio.PutObjectOptions{
		ContentType:  "application/octet-stream",
		UserMetadata: map[string]string{metaSHA256: sum},
	}
	if createOnly {
		opts.SetMatchETagExcept("*")
	}
	_, err := s.conn.client.PutObject(ctx, s.bucket, key, r, size, opts)
	return s.conn.classify(op, s.bucket, key, err)
}
