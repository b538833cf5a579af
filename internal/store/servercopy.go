package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"
)

// ServerCopyInput is what ServerCopy copies, and under which rules.
type ServerCopyInput struct {
	// Key is the destination in the store ServerCopy is called on.
	Key string
	// Src and SrcKey are the source: a store on any bucket of the same server.
	Src    *Store
	SrcKey string
	// SHA256 is what the bytes must hash to, and what the destination
	// records as its sha256.
	SHA256 string
	// CreateOnly makes the copy fail with ErrExists, writing nothing, when
	// the destination is taken, as PutCreate does.
	CreateOnly bool
	// Progress, if not nil, is told the bytes copied so far as the
	// server finishes parts, and then the bytes checked so far.
	Progress func(copied, checked int64)
}

// ServerCopyPartBytes is the size of the parts the server copies at once:
// large, since each part is one request whose bytes never leave the server,
// yet small enough that a multi-gigabyte file is copied by several parts in
// parallel. S3 allows 5 GiB a part at most, and 5 MiB at least but for the
// last part.
var ServerCopyPartBytes int64 = 256 << 20

// serverCopyParallel bounds the parts copied at once: the server's disks,
// not this process, do the work.
const serverCopyParallel = 4

// ServerCopy copies Src/SrcKey to Key on the server with S3 UploadPartCopy, so
// that no byte passes through this process on the way, and then proves the
// copy by reading it back: the destination must hash to in.SHA256, or it is
// deleted again and the error wraps ErrCorrupt. The read costs one download
// of the object, where a copy through this process costs a download and an
// upload, and the server checks the same bytes again on its side.
//
// The copy is a multipart upload that names the source's ETag on every
// part in x-amz-copy-source-if-match, so all parts are cut from one version
// of the source. With CreateOnly it is started and completed under
// If-None-Match: *, which S3 checks on CompleteMultipartUpload, so a taken
// key is never replaced; a CopyObject carries no such condition.
// A failed or cancelled copy aborts its upload and leaves nothing at Key;
// one that completes aborts every other upload of Key, as uploads.go says.
// A part refused because the source changed since it was checked, a 412 on
// x-amz-copy-source-if-match, is an error wrapping ErrSourceChanged.
func (s *Store) ServerCopy(ctx context.Context, in ServerCopyInput) error {
	core := minio.Core{Client: s.conn.client}
	src, err := in.Src.conn.client.StatObject(ctx, in.Src.bucket, in.SrcKey,
		minio.StatObjectOptions{})
	if err != nil {
		return in.Src.conn.classify("copy", in.Src.bucket, in.SrcKey, err)
	}
	if got := infoOf(src).SHA256; got != "" && got != in.SHA256 {
		return fmt.Errorf("store: copy %s/%s: recorded sha256 %s, expected %s: %w",
			in.Src.bucket, in.SrcKey, got, in.SHA256, ErrCorrupt)
	}
	opts := minio.PutObjectOptions{
		ContentType:  "application/octet-stream",
		UserMetadata: map[string]string{metaSHA256: in.SHA256},
	}
	if in.CreateOnly {
		opts.SetMatchETagExcept("*")
	}
	upload, err := core.NewMultipartUpload(ctx, s.bucket, in.Key, opts)
	if err != nil {
		return s.conn.classify("copy", s.bucket, in.Key, err)
	}
	parts, err := s.copyParts(ctx, in, upload, src)
	if err == nil {
		_, err = core.CompleteMultipartUpload(ctx, s.bucket, in.Key, upload, parts, opts)
		err = s.conn.classify("copy", s.bucket, in.Key, err)
	}
	if err != nil {
		// A completed upload has nothing left to abort; an aborted one
		// leaves no object.
		s.abortUpload(ctx, in.Key, upload)
		return err
	}
	s.abortOthers(ctx, in.Key, upload)
	var checked func(int64)
	if in.Progress != nil {
		checked = func(n int64) { in.Progress(src.Size, n) }
	}
	if err := s.Check(ctx, in.Key, in.SHA256, checked); err != nil {
		if errors.Is(err, ErrCorrupt) {
			// Bytes this call just created and nobody may take for the
			// source's: gone again, so that a new try starts clean.
			_ = s.Delete(context.WithoutCancel(ctx), in.Key)
		}
		return err
	}
	return nil
}

// copyParts has the server copy src into the parts of upload, a few at a
// time, and returns them in order.
func (s *Store) copyParts(
	ctx context.Context,
	in ServerCopyInput,
	upload string,
	src minio.ObjectInfo,
) ([]minio.CompletePart, error) {
	core := minio.Core{Client: s.conn.client}
	n := max(1, (src.Size+ServerCopyPartBytes-1)/ServerCopyPartBytes)
	parts := make([]minio.CompletePart, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(serverCopyParallel)
	// Every part from the version of the source that was checked above.
	cond := map[string]string{"x-amz-copy-source-if-match": src.ETag}
	var copied atomic.Int64
	for i := range n {
		g.Go(func() error {
			off := i * ServerCopyPartBytes
			length := min(ServerCopyPartBytes, src.Size-off)
			if src.Size == 0 {
				length = -1 // the whole object, which is empty
			}
			p, err := core.CopyObjectPart(gctx, in.Src.bucket, in.SrcKey, s.bucket, in.Key,
				upload, int(i)+1, off, length, cond)
			if minio.ToErrorResponse(err).Code == minio.PreconditionFailed {
				// The condition that fails here is the source's ETag, not
				// the destination's If-None-Match, which is checked at completion.
				return fmt.Errorf("store: copy %s/%s to %s/%s: the source is no longer "+
					"the version of ETag %s it was checked at: %w",
					in.Src.bucket, in.SrcKey, s.bucket, in.Key, src.ETag, ErrSourceChanged)
			}
			if err != nil {
				return s.conn.classify("copy", s.bucket, in.Key, err)
			}
			parts[i] = p
			if n := copied.Add(max(length, 0)); in.Progress != nil {
				in.Progress(n, 0)
			}
			return nil
		})
	}
	return parts, g.Wait()
}

// Check reads the object at key and fails with an error wrapping
// ErrCorrupt unless it hashes to wantSHA256 and to the sha256 it records.
// progress, if not nil, is told the bytes read so far.
func (s *Store) Check(
	ctx context.Context,
	key, wantSHA256 string,
	progress func(read int64),
) error {
	obj, info, err := s.open(ctx, key)
	if err != nil {
		return err
	}
	defer obj.Close()
	h := sha256.New()
	w := io.Writer(h)
	if progress != nil {
		w = &progressWriter{w: h, progress: progress}
	}
	n, err := io.Copy(w, obj)
	if err != nil {
		return s.conn.classify("check", s.bucket, key, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantSHA256 || n != info.Size {
		return fmt.Errorf("store: check %s/%s: read %d bytes of sha256 %s, expected %s: %w",
			s.bucket, key, n, got, wantSHA256, ErrCorrupt)
	}
	return s.verify(key, info, h.Sum(nil))
}

// progressWriter counts the bytes written through it for progress.
type progressWriter struct {
	w        io.Writer
	n        int64
	progress func(int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	p.progress(p.n)
	return n, err
}
