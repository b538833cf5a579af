package store

import (
	"context"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// An incomplete multipart upload keeps its parts, stored and billed, until
// it is completed or aborted, and lists as no object: a writer killed
// mid-upload leaves one, and so does a CreateMultipartUpload whose answer
// was lost, since the client asks again and the upload its first request
// opened is known to nobody. Upload and ServerCopy abort their own upload
// on every path that gives it up; once one completes, it aborts every other
// upload of its key, which can only be such a leftover or a writer of the
// same bytes that lost the race: abortOthers. And gc aborts what is left
// under a bake's prefix: AbortUploads. A bucket lifecycle rule,
// AbortIncompleteMultipartUpload in docs/DEPLOY.md, is the last resort for
// uploads that outlive all three.

// abortTimeout bounds the abort of an upload given up, which must outlive
// the cancelled context that gave it up: minio-go's own abort of a failed
// PutObject waits as long, in abortFailedUpload of api-remove.go.
const abortTimeout = time.Minute

// AbortUploads aborts every incomplete multipart upload whose key begins
// with prefix and returns how many it aborted. Keys match as strings: end
// prefix with "/" for one folder.
func (s *Store) AbortUploads(ctx context.Context, prefix string) (int, error) {
	// MinIO lists the uploads of one key for a prefix, none for a folder,
	// and those of the whole bucket for "", as ListMultipartUploads on the
	// pinned server shows: the whole bucket is listed and filtered.
	return s.abortUploads(ctx, "", func(key, _ string) bool {
		return strings.HasPrefix(key, prefix)
	})
}

// abortOthers aborts, best effort, the incomplete uploads of key but the
// upload keep, "" for none: called once an upload of key completed,
// which no other may then replace. A failure leaves them to gc and the
// lifecycle rule; the object itself is complete.
func (s *Store) abortOthers(ctx context.Context, key, keep string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	_, _ = s.abortUploads(ctx, key, func(k, id string) bool { return k == key && id != keep })
}

// abortUpload aborts upload id of key, even when ctx, which gave it up, is
// cancelled.
func (s *Store) abortUpload(ctx context.Context, key, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	core := minio.Core{Client: s.conn.client}
	_ = core.AbortMultipartUpload(ctx, s.bucket, key, id)
}

// abortUploads aborts the incomplete uploads listed under list that which
// picks, and returns how many it aborted.
func (s *Store) abortUploads(
	ctx context.Context,
	list string,
	which func(key, uploadID string) bool,
) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	uploads := s.conn.client.ListIncompleteUploads(ctx, s.bucket, list, true)
	defer func() {
		cancel()
		for range uploads { // the lister ends once cancelled and drained
		}
	}()
	core := minio.Core{Client: s.conn.client}
	aborted := 0
	for u := range uploads {
		if u.Err != nil {
			return aborted, s.conn.classify("list uploads", s.bucket, list, u.Err)
		}
		if !which(u.Key, u.UploadID) {
			continue
		}
		err := core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID)
		if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchUpload {
			return aborted, s.conn.classify("abort upload", s.bucket, u.Key, err)
		}
		aborted++
	}
	return aborted, nil
}
