package activities

import (
	"context"
	"time"

	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// HubErr exposes hubErr to the external tests.
var HubErr = hubErr

// WantStoreUnavailable fails a test unless its error is a retryable
// StoreUnavailable failure that says each of wants.
var WantStoreUnavailable = wantStoreUnavailable

// CommitPartial commits a slice's partial dataset as BakeSlice does, for the
// merge benchmark, which needs 100,000 of them without their engine work.
var CommitPartial = (*Activities).commitPartial

// CommitDir commits a local directory at a prefix as the activities do, for
// tests that need a committed dataset of a given size without baking it.
func CommitDir(
	ctx context.Context,
	s *store.Store,
	dir, prefix string,
	id seal.Seal,
) (manifest.Manifest, string, error) {
	return commitDir(ctx, s, commit{dir: dir, prefix: prefix, id: id})
}

// SetCopyRetry makes Push try a release file tries times, waiting first,
// doubling, up to max, until the test ends: the tests of S3 faults need
// not wait the production backoff.
func SetCopyRetry(t interface{ Cleanup(func()) }, tries int, first, max time.Duration) {
	old := copyRetry
	copyRetry = retryPolicy{Tries: tries, First: first, Max: max}
	t.Cleanup(func() { copyRetry = old })
}

// SetCheckpointSaveTimeout bounds a checkpoint save by d until the test
// ends, so that a test of an S3 that stopped answering need not wait 30 s a
// save.
func SetCheckpointSaveTimeout(t interface{ Cleanup(func()) }, d time.Duration) {
	old := checkpointSaveTimeout
	checkpointSaveTimeout = d
	t.Cleanup(func() { checkpointSaveTimeout = old })
}

// SetServerCopyBytes makes Push and CombineSplits copy files of n bytes or
// more on the server until the test ends, so that small test files take
// that path.
func SetServerCopyBytes(t interface{ Cleanup(func()) }, n int64) {
	old := serverCopyBytes
	serverCopyBytes = n
	t.Cleanup(func() { serverCopyBytes = old })
}
