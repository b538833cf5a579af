package bakeapi

import (
	"strings"
	"time"
)

// Task queues. GPU workers poll a GPU queue (GPUQueue unless a bake names
// another); the control worker runs the workflows and the CPU activities.
const (
	ControlQueue = "bake-control"
	GPUQueue     = "bake-gpu"
)

// Workflow and activity type names. Workers register the implementations
// under these names; workflows call activities by them, which is what keeps
// workflow code free of the activities' dependencies.
const (
	BakeWorkflowName  = "BakeWorkflow"
	SplitWorkflowName = "SplitWorkflow"

	GenerateSeedsActivity = "GenerateSeeds"
	BakeSliceActivity     = "BakeSlice"
	// NameSplitActivity writes a protocol-4.0 split's salted identity
	// blocks (a GPU queue's activity: only GPU workers hold the salt).
	NameSplitActivity = "NameSplit"
	// MergeSplitActivity merges a split's slices beside them, each as soon
	// as it and those before it are committed, into a merged split that
	// holds a summary of the split's files in the bake's dataset in place
	// of its rows; CombineSplitsActivity combines such merged splits.
	MergeSplitActivity    = "MergeSplit"
	CombineSplitsActivity = "CombineSplits"
	PushActivity          = "Push"
	HubPushActivity       = "HubPush"
	// GPUWorkersActivity counts the workers of a GPU queue (a local
	// activity of the control worker), for MaxInFlight 0 ("auto").
	GPUWorkersActivity = "GPUWorkers"
)

// Search attributes (keyword) registered on the server (`whestbake dev up` does it).
const (
	BakeIDAttribute    = "BakeID"
	BakeStageAttribute = "BakeStage"
)

// BakeWorkflowID is the ID of a bake's top-level workflow.
func BakeWorkflowID(bakeID string) string { return "bake/" + bakeID }

// SplitWorkflowID is the ID of a split's child workflow.
func SplitWorkflowID(bakeID, split string) string { return "bake/" + bakeID + "/split/" + split }

// BakeIDFromWorkflowID inverts BakeWorkflowID; ok is false for other IDs.
func BakeIDFromWorkflowID(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "bake/")
	if !ok || strings.Contains(rest, "/") {
		return "", false
	}
	return rest, true
}

// SplitSpec is one split of a bake.
type SplitSpec struct {
	Name, Config string
	NMLPs        int
	Seed         *uint64 `json:",omitempty"` // generate seeds deterministically from this root
	SeedsKey     string  `json:",omitempty"` // or use the seeds file the starter uploaded here
	// Fingerprint is the bake Record's fingerprint of this split.
	Fingerprint string `json:",omitempty"`
}

// ReleaseSpec is where Push publishes; an empty Bucket skips the push.
type ReleaseSpec struct {
	Bucket, Prefix, Name, Tag string
}

// HubSpec is where HubPush publishes on the Hugging Face Hub. The token is
// the control worker's own (HF_TOKEN or release.hub.token-file), never here.
type HubSpec struct {
	Repo     string // owner/name
	Revision string `json:",omitempty"` // branch; "" is main
	Tag      string `json:",omitempty"`
	Message  string `json:",omitempty"` // "" is whestbench's default
	Endpoint string `json:",omitempty"` // "" is https://huggingface.co
	Private  bool   `json:",omitempty"` // applies when the push creates the repository
	Replace  bool   `json:",omitempty"` // may replace another dataset the revision holds
}

// BakeInput is everything a bake needs, all of it small and secret-free.
type BakeInput struct {
	BakeParams   // what every split runs with
	Splits       []SplitSpec
	DefaultSplit string `json:",omitempty"`
	Release      ReleaseSpec
	// Hub, if set, publishes the dataset on the Hugging Face Hub after the
	// release.
	Hub *HubSpec `json:",omitempty"`
}

// BakeOutput is where the result is.
type BakeOutput struct {
	DatasetPrefix, ManifestSHA256 string
	ReleaseURI                    string `json:",omitempty"`
	HubURL, HubCommit             string `json:",omitempty"`
}

// BakeParams are the settings every split of a bake runs with: BakeInput
// and each SplitInput embed them. Embedded, its fields stay at the top level
// of the JSON.
type BakeParams struct {
	BakeID    string
	Spec      Spec `json:"Shape"` // the payload's name for it
	SliceSize int  // MLPs per BakeSlice activity
	// MaxInFlight is the number of slices running at once per split; 0 is
	// "auto": as many as workers poll GPUQueue, re-counted while it runs.
	MaxInFlight int
	GPUQueue    string // task queue of the GPU workers
	Policy      Policy
	// CreatedAt is the bake Record's start time, which dates every dataset
	// of the bake.
	CreatedAt time.Time
	// KeepIntermediates keeps what each step leaves for the next (identity
	// blocks, per-MLP results, checkpoints, slice partials, merged splits).
	// By default each step deletes its inputs once its own output is
	// committed, so the bake's storage peaks near twice the dataset.
	KeepIntermediates bool `json:",omitempty"`
}

// SplitInput is one split of a bake, with its committed seeds file.
type SplitInput struct {
	BakeParams
	Split SplitSpec
	Seeds GenerateSeedsOutput
	// Cursor is where a continued run of the split resumes; nil in its first run.
	Cursor *SplitCursor `json:",omitempty"`
}

// SplitCursor is what a SplitWorkflow run hands to the next when it continues
// as new, so that no run's history grows with the split: a count, not a list.
// Every slice below Next is committed at its deterministic key, which is all
// MergeSplit needs to find it.
type SplitCursor struct {
	Next      int       // slices [0, Next) are committed, but for Stopped
	Runs      int       // runs of the split before this one
	StartedAt time.Time // when the split's first run began, for the ETA
	// Stopped are slices below Next that their workers handed back
	// unfinished (ErrWorkerStopping) and the run ended before starting
	// again; the next run starts them first. At most a window's worth.
	Stopped []StoppedSlice `json:",omitempty"`
}

// StoppedSlice is what a split remembers of a slice that a worker stopped
// gracefully: a stop hands the slice back to the workflow, which starts it
// again without spending its attempts unless the stop saved nothing.
type StoppedSlice struct {
	Slice int
	// Spent counts the attempts the slice has used of
	// Policy.SliceMaxAttempts: failed attempts, and stops that saved no
	// checkpoint or result.
	Spent int32
	Stops int // graceful stops so far
}

// SliceStop is the detail of a BakeSlice attempt that ends because its
// worker is shutting down (ErrWorkerStopping).
type SliceStop struct {
	Attempt int32 // the stopped attempt; those before it failed otherwise
	// Saved: this attempt stored a checkpoint or a finished MLP, so the
	// slice moved forward and the stop costs it no attempt.
	Saved bool
}

// SplitOutput counts the MLPs and slices the split baked.
type SplitOutput struct {
	NMLPs, Slices int
}

// Policy holds every timeout and retry bound of a bake. It comes from config and
// is recorded in the workflow input, so the history says what the bake ran with.
type Policy struct {
	SeedsTimeout        Duration // GenerateSeeds start-to-close
	SliceTimeout        Duration // one BakeSlice attempt; ≥ 2× the slowest slice
	SliceHeartbeat      Duration // how fast a dead GPU host is noticed
	SliceMaxAttempts    int32
	MergeTimeout        Duration // MergeSplit and CombineSplits
	PushTimeout         Duration
	RetryInitial        Duration
	RetryMax            Duration
	OtherMaxAttempts    int32
	FilesystemHeartbeat Duration // heartbeat of the copy-heavy CPU activities
}

// DefaultPolicy: slices may run for hours, so the heartbeat (not start-to-close)
// detects a lost host within minutes; every retry is bounded, because Temporal's
// default retries forever and a poisoned input would loop.
var DefaultPolicy = Policy{
	SeedsTimeout:        Duration(10 * time.Minute),
	SliceTimeout:        Duration(12 * time.Hour),
	SliceHeartbeat:      Duration(3 * time.Minute),
	SliceMaxAttempts:    20,
	MergeTimeout:        Duration(2 * time.Hour),
	PushTimeout:         Duration(2 * time.Hour),
	RetryInitial:        Duration(10 * time.Second),
	RetryMax:            Duration(10 * time.Minute),
	OtherMaxAttempts:    10,
	FilesystemHeartbeat: Duration(2 * time.Minute),
}

// ProgressQuery is the query every bake workflow answers.
const ProgressQuery = "progress"

// Stages, also the BakeStage search attribute.
const (
	StageSeeding   = "seeding"
	StageBaking    = "baking"
	StageMerging   = "merging"
	StageCombining = "combining"
	StagePushing   = "pushing"
	StageDone      = "done"
)

// SplitProgress is a split's state as its workflow sees it. A time it does
// not know is absent from the JSON rather than the zero time (year 1).
type SplitProgress struct {
	Split                   string
	Stage                   string
	MLPsDone, MLPsTotal     int
	SlicesDone, SlicesTotal int
	SlicesRunning           int
	// MaxInFlight is the split's window now: the bake's, or auto's count of GPU workers.
	MaxInFlight int       `json:",omitempty"`
	StartedAt   time.Time `json:",omitzero"` // absent until the split workflow runs
	ETA         time.Time `json:",omitzero"` // absent until a slice has finished
}

// BakeProgress is the bake's state; per-split detail comes from the split workflows.
type BakeProgress struct {
	BakeID string
	Stage  string
	Splits []SplitProgress
}
