package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"
)

// Upload sends a local file to an object while another writer is still
// appending to it: a multipart upload whose parts go up in the background,
// read back from the file, as the writer passes them, so that when the
// writer is done only the last part is left to send. The writer hands
// Upload every byte right after writing it to the file, as an io.Writer
// behind the file in an io.MultiWriter, which is how Upload knows how far
// the file is written and what the bytes hash to; the parts are read from
// the file, so memory stays at a few small buffers whatever the object's
// size.
//
// An S3 object's metadata is fixed when its upload starts, before the
// bytes are known: an object written this way records no sha256 of its
// own, and the manifest that lists it with Close's Info vouches for it.
// Nothing is at the key until Close succeeds; Abort, or a failed Close,
// leaves nothing, and a Close that succeeds aborts every other upload of
// the key, as uploads.go says.
type Upload struct {
	s        *Store
	key      string
	path     string
	ctx      context.Context
	id       string
	file     *os.File // path, opened at the first byte
	sent     int64    // the bytes handed to parts so far
	size     int64    // the bytes written so far
	digest   hash.Hash
	group    *errgroup.Group
	gctx     context.Context
	mu       sync.Mutex
	parts    []minio.CompletePart // handed out, their ETags filled in as they are done
	failed   error
	finished bool
}

// The parts of an Upload: S3 takes 10,000 at most, each of 5 MiB or more
// but the last, so they grow with the object: uploadPartBytes for the first
// uploadPartTier parts, twice that for the next, and so on, which reaches
// S3's 5 TiB limit within 10,000 parts. uploadParallel parts are in flight
// at most, so the writer waits when S3 is slower than it.
var uploadPartBytes int64 = 32 << 20

const (
	uploadPartTier = 1500
	uploadParallel = 2
)

// NewUpload starts an Upload of the file at path, which the writer is
// creating, to key. Like Put, it replaces what is there when it completes.
func (s *Store) NewUpload(ctx context.Context, key, path string) (*Upload, error) {
	core := minio.Core{Client: s.conn.client}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	id, err := core.NewMultipartUpload(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, s.conn.classify("upload", s.bucket, key, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploadParallel)
	return &Upload{
		s: s, key: key, path: path, ctx: ctx, id: id, group: g, gctx: gctx,
		digest: sha256.New(),
	}, nil
}

// partBytes is the size of part n, counted from 1.
func partBytes(n int) int64 { return uploadPartBytes << min((n-1)/uploadPartTier, 20) }

// Write takes p, the bytes just written to the file after those before,
// and sends every part they complete.
func (u *Upload) Write(p []byte) (int, error) {
	if u.failed != nil {
		return 0, u.failed
	}
	if u.gctx.Err() != nil { // a part failed: say why
		err := u.group.Wait()
		if err == nil {
			err = u.gctx.Err()
		}
		return 0, u.fail(err)
	}
	if u.file == nil && len(p) > 0 {
		// Opened now, while the writer's path surely names the file: a
		// writer may rename it once done.
		f, err := os.Open(u.path)
		if err != nil {
			return 0, u.fail(err)
		}
		u.file = f
	}
	u.digest.Write(p)
	u.size += int64(len(p))
	for u.size-u.sent >= partBytes(len(u.parts)+1) {
		u.send(partBytes(len(u.parts) + 1))
	}
	return len(p), nil
}

// send hands the next n bytes of the file to the background as a part.
func (u *Upload) send(n int64) {
	u.mu.Lock()
	number := len(u.parts) + 1
	u.parts = append(u.parts, minio.CompletePart{PartNumber: number})
	u.mu.Unlock()
	// minio-go sends a part again on a failed try: it rewinds the section.
	var body io.Reader = bytes.NewReader(nil) // the one part of an empty file
	if u.file != nil {
		body = io.NewSectionReader(u.file, u.sent, n)
	}
	u.sent += n
	core := minio.Core{Client: u.s.conn.client}
	u.group.Go(func() error {
		p, err := core.PutObjectPart(u.gctx, u.s.bucket, u.key, u.id, number, body, n,
			minio.PutObjectPartOptions{})
		if err != nil {
			return u.s.conn.classify("upload", u.s.bucket, u.key, err)
		}
		u.mu.Lock()
		u.parts[number-1].ETag = p.ETag
		u.mu.Unlock()
		return nil
	})
}

// Close sends what is left once the writer has written the whole file,
// completes the upload and returns the size and sha256 of every byte
// written.
func (u *Upload) Close() (Info, error) {
	if u.finished {
		return Info{}, errors.New("store: upload closed twice")
	}
	u.finished = true
	if u.failed == nil && (u.size > u.sent || len(u.parts) == 0) {
		u.send(u.size - u.sent)
	}
	err := u.group.Wait()
	if u.failed != nil {
		err = u.failed
	}
	if err == nil {
		core := minio.Core{Client: u.s.conn.client}
		_, err = core.CompleteMultipartUpload(u.ctx, u.s.bucket, u.key, u.id, u.parts,
			minio.PutObjectOptions{})
		err = u.s.conn.classify("upload", u.s.bucket, u.key, err)
	}
	u.closeFile()
	if err != nil {
		u.s.abortUpload(u.ctx, u.key, u.id)
		return Info{}, err
	}
	u.s.abortOthers(u.ctx, u.key, u.id)
	return Info{Size: u.size, SHA256: hex.EncodeToString(u.digest.Sum(nil))}, nil
}

// Abort gives the upload up, leaving nothing at the key; after Close it
// does nothing.
func (u *Upload) Abort() {
	if u.finished {
		return
	}
	u.finished = true
	_ = u.group.Wait()
	u.closeFile()
	u.s.abortUpload(u.ctx, u.key, u.id)
}

func (u *Upload) closeFile() {
	if u.file != nil {
		u.file.Close()
		u.file = nil
	}
}

func (u *Upload) fail(err error) error {
	u.failed = fmt.Errorf("store: upload %s/%s from %s: %w", u.s.bucket, u.key, u.path, err)
	return u.failed
}
