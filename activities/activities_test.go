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
		{"BakeSlice refuses state of another spec", testBakeSliceRefusesStateOfAnotherSpec},
		{"BakeSlice recomputes damaged state", testBakeSliceRecomputesDamagedState},
		{"BakeSlice recomputes a damaged commit", testBakeSliceRecomputesADamagedCommit},
		{
			"BakeSlice recommits a slice unlike its manifest",
			testBakeSliceRecommitsASliceUnlikeItsManifest,
		},
		{"BakeSlice keeps work from before seals", testBakeSliceKeepsWorkFromBeforeSeals},
		{"BakeSlice refuses changed seeds", testBakeSliceRefusesChangedSeeds},
		{"BakeSlice without identity blocks", testBakeSliceWithoutIdentityBlocks},
		{
			"BakeSlice refuses a shape too big for the worker",
			testBakeSliceRefusesAShapeTooBigForTheWorker,
		},
		{"BakeSlice stops for worker shutdown", testBakeSliceStopsForWorkerShutdown},
		{"BakeSlice takes a 4.0 salt from the worker", testBakeSliceProtocolV4},
		{"BakeSlice cut off from S3 fails its attempt", testBakeSliceCutOffFromS3FailsItsAttempt},
		{
			"BakeSlice rides out a failed checkpoint save",
			testBakeSliceRidesOutAFailedCheckpointSave,
		},
		{"BakeSlice stalled on S3 names S3", testBakeSliceStalledOnS3NamesS3},
		{"NameSplit names a 4.0 split once", testNameSplitProtocolV4},
		{"GenerateSeeds matches numpy", testGenerateSeedsMatchesNumpy},
		{"GenerateSeeds is create-only", testGenerateSeedsIsCreateOnly},
		{"GenerateSeeds from an upload", testGenerateSeedsFromUpload},
		{"GenerateSeeds refuses a changed seeds file", testGenerateSeedsRefusesAChangedSeedsFile},
		{"Push is immutable", testPushIsImmutable},
		{"Push refuses a leftover of another release", testPushRefusesLeftoverFromAnotherRelease},
		{
			"Push refuses a dataset file unlike its manifest",
			testPushRefusesADatasetFileUnlikeItsManifest,
		},
		{
			"Push fails at once on a file rewritten under its recorded sha256",
			testPushFailsAtOnceOnAFileRewrittenUnderItsRecordedSHA256,
		},
		{"Push to a missing bucket is permanent", testPushToMissingBucketIsPermanent},
		{
			"Push and HubPush refuse a prepared tree unlike the parquet",
			testPushRefusesAPreparedTreeUnlikeTheParquet,
		},
		{"Another bake's dataset is never this bake's", testAnotherBakesDatasetIsNeverThisBakes},
		{"copies on the server change no byte", testCopiesOnTheServerChangeNoByte},
		{"CombineSplits is the local combine", testCombineIsTheLocalCombine},
		{
			"CombineSplits refuses a summary naming a file twice",
			testCombineRefusesASummaryNamingAFileTwice,
		},
		{
			"Push on the server refuses rewritten bytes",
			testPushOnTheServerRefusesRewrittenBytes,
		},
		{"Push copies a replaced source once more", testPushCopiesAReplacedSourceOnceMore},
		{"Push heartbeats a long copy", testPushHeartbeatsALongCopy},
		{"Push stops a stalled copy", testPushStopsAStalledCopy},
		{"Push rides out a burst of 503s", testPushRidesOutABurstOf503s},
		{"Push ends its attempt in a storm of 503s", testPushEndsItsAttemptInAStormOf503s},
		{
			"MergeSplit fails at once on a damaged partial",
			testMergeSplitFailsAtOnceOnADamagedPartial,
		},
		{"MergeSplit streams many slices", testMergeSplitStreamsManySlices},
		{"MergeSplit waits for its slices", testMergeSplitWaitsForItsSlices},
		{"A stale merge finds the split merged", testStaleMergeFindsTheSplitMerged},
		{
			"MergeSplit cancelled ends cancelled",
			testMergeSplitCancelledEndsCancelled,
		},
		{"A slice partial has no card", testSlicePartialHasNoCard},
		{"Intermediates are deleted as consumed", testIntermediatesAreDeletedAsConsumed},
		{"Keep intermediates", testKeepIntermediates},
		{"Restart after cleanup", testRestartAfterCleanup},
		{
			"Committed objects that vanish are said to be gone",
			testCommittedObjectsThatVanishAreSaidToBeGone,
		},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, f) })
	}
}
