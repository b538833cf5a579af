package activities_test

import "testing"

// TestActivitiesAgainstMinIO runs every activity test against one real
// MinIO (starting one per test would dominate the run time). Each case uses
// its own bake IDs, so they cannot see each other's objects.
func TestActivitiesAgainstMinIO(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name string
		run  func(*testing.T, *fixture)
	}{
		{"BakeSlice is idempotent", testBakeSliceIsIdempotent},
		{"BakeSlice keeps finished MLPs", testBakeSliceKeepsFinishedMLPs},
		{"BakeSlice resumes from a checkpoint", testBakeSliceResumesFromCheckpoint},
		{"BakeSlice refuses corrupt state", testBakeSliceRefusesCorruptState},
		{"BakeSlice refuses changed seeds", testBakeSliceRefusesChangedSeeds},
		{"BakeSlice without identity blocks", testBakeSliceWithoutIdentityBlocks},
		{"BakeSlice refuses a shape too big for the worker", testBakeSliceRefusesAShapeTooBigForTheWorker},
		{"BakeSlice stops for worker shutdown", testBakeSliceStopsForWorkerShutdown},
		{"BakeSlice takes a 4.0 salt from the worker", testBakeSliceProtocolV4},
		{"GenerateSeeds matches numpy", testGenerateSeedsMatchesNumpy},
		{"GenerateSeeds is create-only", testGenerateSeedsIsCreateOnly},
		{"GenerateSeeds from an upload", testGenerateSeedsFromUpload},
		{"Push is immutable", testPushIsImmutable},
		{"Push refuses a leftover of another release", testPushRefusesLeftoverFromAnotherRelease},
		{"Push refuses a dataset file unlike its manifest", testPushRefusesADatasetFileUnlikeItsManifest},
		{"Push to a missing bucket is permanent", testPushToMissingBucketIsPermanent},
		{"Push heartbeats a long copy", testPushHeartbeatsALongCopy},
		{"Push stops a stalled copy", testPushStopsAStalledCopy},
		{"MergeSplit refuses an uncommitted slice", testMergeSplitRefusesUncommittedSlice},
		{"MergeSplit streams many slices", testMergeSplitStreamsManySlices},
		{"A slice partial has no card", testSlicePartialHasNoCard},
		{"Intermediates are deleted as consumed", testIntermediatesAreDeletedAsConsumed},
		{"Keep intermediates", testKeepIntermediates},
		{"Restart after cleanup", testRestartAfterCleanup},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, f) })
	}
}
