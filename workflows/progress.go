package workflows

import "time"

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

// SplitProgress is a split's state as its workflow sees it.
type SplitProgress struct {
	Split                   string
	Stage                   string
	MLPsDone, MLPsTotal     int
	SlicesDone, SlicesTotal int
	SlicesRunning           int
	StartedAt               time.Time
	ETA                     time.Time `json:",omitempty"` // zero until a slice has finished
}

// BakeProgress is the bake's state; per-split detail comes from the split workflows.
type BakeProgress struct {
	BakeID string
	Stage  string
	Splits []SplitProgress
}
