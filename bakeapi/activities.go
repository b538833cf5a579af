package bakeapi

import "time"

// GenerateSeedsInput names a split's seeds: either a file the starter uploaded,
// UploadedKey, or a list generated from Seed, or from OS entropy when Seed is nil.
type GenerateSeedsInput struct {
	BakeID, Split string
	NMLPs         int
	Seed          *uint64 `json:",omitempty"`
	UploadedKey   string  `json:",omitempty"`
	// SeedProtocol is the bake's seed protocol: under 4.0 the identity blocks
	// are named under the salt, by the GPU workers, so GenerateSeeds writes
	// none. Empty means 3.0.
	SeedProtocol SeedProtocol `json:",omitempty"`
}

// GenerateSeedsOutput is the canonical seeds file of the split.
type GenerateSeedsOutput struct {
	SeedsKey, SHA256 string
	NMLPs            int
	// Merged says the split is already merged, or the whole bake combined,
	// by an earlier run of the bake: its slices, whose intermediates may be
	// deleted, need not run again.
	Merged bool `json:",omitempty"`
}

// BakeSliceInput is one slice: MLPs [Start, End) of a split of NMLPs.
type BakeSliceInput struct {
	BakeID, Split, Config string
	Slice, Start, End     int
	NMLPs                 int
	SeedsKey, SeedsSHA256 string
	Spec                  Spec      `json:"Shape"`      // the payload's name for it
	Fingerprint           string    `json:",omitempty"` // SplitSpec.Fingerprint
	CreatedAt             time.Time // BakeInput.CreatedAt
}

// BakeSliceOutput says where the slice's partial dataset is and what it cost.
type BakeSliceOutput struct {
	Prefix         string
	ManifestSHA256 string
	Computed       int // MLPs computed from scratch by this attempt
	Resumed        int // MLPs continued from a checkpoint by this attempt
	Reused         int // MLPs already finished by an earlier attempt
	// Discarded counts the damaged objects this attempt found, dropped and
	// recomputed: results, checkpoints, identity blocks, a partial's manifest.
	Discarded int `json:",omitempty"`
}

// NameSplitInput is a protocol-4.0 split to name: its MLPs' names come from
// salted name seeds and their collision suffixes from the whole list, so one
// GPU worker, the only kind that holds the salt, derives them once, from the
// seeds file, and writes the identity blocks every slice reads.
type NameSplitInput struct {
	BakeID, Split         string
	NMLPs                 int
	SeedsKey, SeedsSHA256 string
	Salt                  Salt // the bake's declared salt, Spec.Salt, checked against the worker's
}

// NameSplitOutput says how many identity blocks hold the split's names.
type NameSplitOutput struct {
	Blocks int
}

// SliceProgress is BakeSlice's heartbeat detail: for display only, the store is the truth.
type SliceProgress struct {
	Split                    string
	Slice                    int
	DoneMLPs, TotalMLPs      int
	CurrentMLP               int
	SamplesDone, SamplesEach int64
	// Discarded counts the damaged objects dropped and recomputed so far.
	Discarded int `json:",omitempty"`
}

// MergeSplitInput names a split's committed slices: slice k of NSlices is at
// its deterministic key, so a split of any size passes one count.
type MergeSplitInput struct {
	BakeID, Split string
	NMLPs         int       `json:",omitempty"`
	NSlices       int       `json:",omitempty"`
	CreatedAt     time.Time // BakeInput.CreatedAt: the merge time recorded
	// KeepIntermediates keeps the slices' partials and state, as BakeInput.KeepIntermediates asks.
	KeepIntermediates bool `json:",omitempty"`
}

// MergeSplitOutput is the merged split directory.
type MergeSplitOutput struct {
	Prefix, ManifestSHA256 string
	NMLPs                  int
}

// CombineSplitsInput lists the merged split prefixes in the bake's split
// order.
type CombineSplitsInput struct {
	BakeID       string
	Splits       []string
	DefaultSplit string `json:",omitempty"`
	// KeepIntermediates keeps the merged splits, as BakeInput.KeepIntermediates asks.
	KeepIntermediates bool `json:",omitempty"`
}

// CombineSplitsOutput is the bake's final dataset directory.
type CombineSplitsOutput struct {
	Prefix, ManifestSHA256 string
	Files                  int
}

// PushInput publishes a committed dataset directory as release <Name>/<Tag>
// under Prefix in Bucket. The credentials are the worker's, never in the input.
type PushInput struct {
	DatasetPrefix             string
	Bucket, Prefix, Name, Tag string
}

// PushOutput is the release's location and manifest checksum.
type PushOutput struct {
	URI, ManifestSHA256 string
}

// HubPushInput publishes a committed dataset directory on the Hugging Face
// Hub. The token is the worker's, never in the input.
type HubPushInput struct {
	DatasetPrefix string
	Hub           HubSpec
}

// HubPushOutput is the commit that holds the dataset on the Hub.
type HubPushOutput struct {
	Commit, URL string
	// NoOp says the revision held these files already: no new commit.
	NoOp bool `json:",omitempty"`
	// Sent and Reused count the LFS objects uploaded and those found on
	// the Hub already, sent by an earlier attempt.
	Sent, Reused int
	// Deleted counts the files an earlier dataset left in the repository's
	// data/ and report/.
	Deleted int `json:",omitempty"`
}

// GPUWorkersInput names the GPU queue whose workers GPUWorkers counts.
type GPUWorkersInput struct {
	Queue string
}

// GPUWorkersOutput is the number of distinct workers the Temporal server saw
// polling the queue in the last few minutes. A worker busy with a slice does
// not poll, and drops out of the count after a while.
type GPUWorkersOutput struct {
	Workers int
}
