package activities

import "time"

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
var CommitDir = commitDir

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
