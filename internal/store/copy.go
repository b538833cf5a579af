package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// CopyCreate copies the object at srcKey of src to key, create-only like
// PutCreate. src may be a store on any bucket of the same server or of
// another. The bytes stream through this process once, in minio-go's
// part-sized buffers, so a copy of any size holds tens of MiB. They must hash
// to wantSHA256 and to the source's recorded sha256: the check is made before
// the last bytes are handed to the upload, so a mismatch fails the upload
// instead of completing it, and leaves nothing at key. A mismatch is an error
// wrapping ErrCorrupt; a taken key, as with PutCreate, one wrapping
// ErrExists. progress, if not nil, is called with the bytes read so far as
// they stream, so that a caller can report a long copy as alive and notice a
// stalled one. Cancelling ctx aborts the copy and leaves nothing at key.
//
// The bytes pass through rather than being copied server-side with
// CopyObject or ComposeObject, because a server-side copy carries no
// create-only condition and is checked by no one.
func (s *Store) CopyCreate(
	ctx context.Context,
	key string,
	src *Store,
	srcKey, wantSHA256 string,
	progress func(copied int64),
) error {
	obj, info, err := src.open(ctx, srcKey)
	if err != nil {
		return err
	}
	defer obj.Close()
	if info.SHA256 != "" && info.SHA256 != wantSHA256 {
		return fmt.Errorf(
			"store: copy %s/%s: recorded sha256 %s, expected %s: %w",
			src.bucket,
			srcKey,
			info.SHA256,
			wantSHA256,
			ErrCorrupt,
		)
	}
	r := &checkedReader{
		src:      obj,
		digest:   sha256.New(),
		left:     info.Size,
		want:     wantSHA256,
		what:     src.bucket + "/" + srcKey,
		progress: progress,
	}
	err = s.put(ctx, "copy", key, r, info.Size, wantSHA256, true)
	if r.err != nil {
		// The client may report a failed body as a network error; the
		// reader knows what really happened.
		return r.err
	}
	return err
}

// checkedReader reads exactly left bytes from src and withholds the last of
// them unless everything read hashes to want: a reader that failed only
// after delivering the final byte would be too late, since an upload of a
// known size completes once it has that byte.
type checkedReader struct {
	src    io.Reader
	digest hash.Hash
	left   int64
	want   string
	what   string
	err    error // sticky once set
	// progress, if not nil, is told the bytes read so far after every read.
	progress func(read int64)
	read     int64
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.src.Read(p)
	c.digest.Write(p[:n])
	c.left -= int64(n)
	if c.read += int64(n); c.progress != nil && n > 0 {
		c.progress(c.read)
	}
	switch {
	case c.left == 0:
		if got := hex.EncodeToString(c.digest.Sum(nil)); got != c.want {
			c.err = fmt.Errorf(
				"store: copy %s: read sha256 %s, expected %s: %w",
				c.what,
				got,
				c.want,
				ErrCorrupt,
			)
			return 0, c.err
		}
		return n, nil
	case err == io.EOF:
		c.err = fmt.Errorf(
			"store: copy %s: the object ended %d bytes before its size: %w",
			c.what,
			c.left,
			io.ErrUnexpectedEOF,
		)
		return 0, c.err
	}
	return n, err
}
