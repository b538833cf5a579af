package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/internal/store"
)

// retryPolicy bounds the tries of one piece of work inside an attempt:
// Tries in all, the first wait First, doubling up to Max.
type retryPolicy struct {
	Tries      int
	First, Max time.Duration
}

// copyRetry is how often Push tries one release file within an attempt.
// minio-go retries a request only when it can send the body again: a part
// of a multipart upload, which it buffers, but not the single PUT of a file
// under its 16 MiB part size, whose bytes stream from the source; and a
// source stream that breaks is never retried. So without this one 503 Slow
// Down, or one reset connection, failed the whole attempt, and a storm of
// them used up the attempts. Six tries wait 1+2+4+8+16 s, 31 s, under the
// heartbeat timeout (policy.filesystem-heartbeat, 2 minutes by default);
// then the attempt fails and Temporal's retry policy spaces the next ones.
// A try starts the file over: a failed one left nothing at the key (a
// refused PUT writes nothing, minio-go aborts a failed multipart upload).
var copyRetry = retryPolicy{Tries: 6, First: time.Second, Max: 30 * time.Second}

// retryCopy runs copy (one release file) until it succeeds, fails for a
// reason a new try cannot change, or has failed copyRetry.Tries times; the
// last error then says how often and for how long it failed.
func retryCopy(ctx context.Context, file string, size int64, copy func() error) error {
	start := time.Now()
	wait := copyRetry.First
	for try := 1; ; try++ {
		err := copy()
		if !transient(ctx, err) {
			return err
		}
		if try == copyRetry.Tries {
			return fmt.Errorf("copying %s failed %d times in %s, the last time with: %w; "+
				"S3 keeps failing, so this attempt ends and the push is tried again later",
				file, try, time.Since(start).Round(time.Millisecond), err)
		}
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn(
				"copy of a release file failed; trying again",
				"File", file,
				"Try", try,
				"Wait", wait,
				"Error", err,
			)
			activity.RecordHeartbeat(ctx, CopyProgress{File: file, Size: size, Retry: try})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, copyRetry.Max)
	}
}

// transient reports whether a failed copy may succeed if tried again: not
// when it succeeded, when its attempt is over (ctx), or when the store
// named a reason that stays (the key is taken, the bytes are not the
// manifest's, the source is gone or was replaced, the credentials, bucket, size or TLS
// settings are wrong), or when the copy stalled: its attempt is then timed
// out already.
func transient(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || errors.Is(err, errCopyStalled) {
		return false
	}
	for _, stays := range []error{
		store.ErrExists,
		store.ErrCorrupt,
		store.ErrSourceChanged,
		store.ErrNotFound,
		store.ErrAuth,
		store.ErrNoBucket,
		store.ErrTooLarge,
		store.ErrTLS,
		context.Canceled,
		context.DeadlineExceeded,
	} {
		if errors.Is(err, stays) {
			return false
		}
	}
	return true
}
