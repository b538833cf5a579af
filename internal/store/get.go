package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/minio/minio-go/v7"

	"github.com/whestbake/whestbake/internal/seal"
)

// Info describes a stored object. SHA256 is the hex sha256 recorded when the
// object was put, empty for objects written by other tools.
type Info struct {
	Size   int64
	SHA256 string
}

// Get reads the object at key and checks it against its recorded sha256.
// A missing key gives an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetMax(ctx, key, noLimit)
}

// noLimit is the bound of a read whose object whestbake itself sized.
const noLimit = math.MaxInt64 - bytes.MinRead

// GetMax is Get of an object that may hold at most max bytes: a larger one
// is refused with ErrTooLarge from its size before its content is read, and
// the read stops after max+1 bytes whatever the size said, so memory is
// bounded by max for an object anyone with write access to the bucket made.
func (s *Store) GetMax(ctx context.Context, key string, max int64) ([]byte, error) {
	data, _, err := s.get(ctx, key, max)
	return data, err
}

// GetSealed reads the sealed JSON object at key into v, checks its seal *sl,
// a field of v, against id with package seal, id.Key set to key, and returns
// the raw bytes. An object without a seal is taken only when it carries the
// sha256 recorded when whestbake put it, and matches it: a bake that started
// under a release without seals still holds such objects. A
// plain PUT or a copy that drops metadata leaves no recorded sha256, and a
// changed object under a kept one fails that check, so neither passes.
func (s *Store) GetSealed(
	ctx context.Context,
	key string,
	v any,
	sl *seal.Seal,
	id seal.Seal,
) ([]byte, error) {
	data, info, err := s.get(ctx, key, noLimit)
	if err != nil {
		return nil, err
	}
	id.Key = key
	err = seal.Unmarshal(s.bucket+"/"+key, data, v, sl, id)
	if errors.Is(err, seal.ErrUnsealed) && info.SHA256 != "" {
		return data, nil
	}
	return data, err
}

func (s *Store) get(ctx context.Context, key string, max int64) ([]byte, Info, error) {
	obj, info, err := s.open(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	defer obj.Close()
	if info.Size > max {
		return nil, Info{}, s.tooLarge(key, info.Size, max)
	}
	// Room for the whole object plus ReadFrom's probe for EOF, so a large
	// object is read without regrowing the buffer.
	var buf bytes.Buffer
	buf.Grow(int(info.Size) + bytes.MinRead)
	h := sha256.New()
	if _, err := buf.ReadFrom(io.TeeReader(io.LimitReader(obj, max+1), h)); err != nil {
		return nil, Info{}, s.conn.classify("get", s.bucket, key, err)
	}
	if int64(buf.Len()) > max {
		return nil, Info{}, s.tooLarge(key, int64(buf.Len()), max)
	}
	if err := s.verify(key, info, h.Sum(nil)); err != nil {
		return nil, Info{}, err
	}
	return buf.Bytes(), info, nil
}

// tooLarge is the error of an object of at least size bytes where max were allowed.
func (s *Store) tooLarge(key string, size, max int64) error {
	return fmt.Errorf(
		"store: get %s/%s: %d bytes or more, where at most %d are allowed: %w",
		s.bucket,
		key,
		size,
		max,
		ErrTooLarge,
	)
}

// GetFile downloads the object at key, of at most max bytes, to path,
// creating the parent directory, and returns the size and sha256 of the
// bytes written, so a caller checking them against a manifest need not
// read the file again. A larger object is refused with ErrTooLarge from its
// size, or after max+1 bytes if the size said less. It writes a temporary
// file beside path and renames it only after the content checked out, so
// path never holds a partial object.
func (s *Store) GetFile(ctx context.Context, key, path string, max int64) (got Info, err error) {
	obj, info, err := s.open(ctx, key)
	if err != nil {
		return Info{}, err
	}
	defer obj.Close()
	if info.Size > max {
		return Info{}, s.tooLarge(key, info.Size, max)
	}
	fail := func(err error) (Info, error) {
		return Info{}, fmt.Errorf("store: get %s/%s to %s: %w", s.bucket, key, path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".part-*")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(obj, max+1))
	if err != nil {
		return Info{}, s.conn.classify("get", s.bucket, key, err)
	}
	if n > max {
		return Info{}, s.tooLarge(key, n, max)
	}
	sum := h.Sum(nil)
	if err := s.verify(key, info, sum); err != nil {
		return Info{}, err
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	return Info{Size: n, SHA256: hex.EncodeToString(sum)}, nil
}

// Stat reports the size and recorded sha256 of the object at key.
func (s *Store) Stat(ctx context.Context, key string) (Info, error) {
	oi, err := s.conn.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s.conn.classify("stat", s.bucket, key, err)
	}
	return infoOf(oi), nil
}

// Exists reports whether an object is stored at key.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	_, err := s.Stat(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// open starts a download with one GET, whose headers carry what Stat would
// ask a HEAD for. minio-go's lazy GetObject spends a HEAD on that first,
// which would double the requests of every read.
func (s *Store) open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	core := minio.Core{Client: s.conn.client}
	body, oi, _, err := core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, s.conn.classify("get", s.bucket, key, err)
	}
	return body, infoOf(oi), nil
}

func (s *Store) verify(key string, info Info, sum []byte) error {
	got := hex.EncodeToString(sum)
	if info.SHA256 != "" && got != info.SHA256 {
		return fmt.Errorf(
			"store: get %s/%s: read sha256 %s, recorded %s: %w",
			s.bucket,
			key,
			got,
			info.SHA256,
			ErrCorrupt,
		)
	}
	return nil
}

func infoOf(oi minio.ObjectInfo) Info {
	return Info{Size: oi.Size, SHA256: oi.Metadata.Get("X-Amz-Meta-" + metaSHA256)}
}

// OpenAt streams the object at key from byte offset on, unchecked: a part of
// an object cannot be checked against the whole one's sha256, so the reader
// verifies what it assembles, as the Hub checks every LFS object's sha256.
func (s *Store) OpenAt(ctx context.Context, key string, offset int64) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	if offset > 0 { // SetRange(0, 0) would be the first byte only
		if err := opts.SetRange(offset, 0); err != nil {
			return nil, err
		}
	}
	obj, err := s.conn.client.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, s.conn.classify("get", s.bucket, key, err)
	}
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		return nil, s.conn.classify("get", s.bucket, key, err)
	}
	return obj, nil
}
