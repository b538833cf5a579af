package rows

import "time"

// A worker's defaults of worker.checkpoint-every and worker.stall-timeout,
// chosen so a crashed host loses at most ~10 s of GPU work per MLP, and a
// wedged engine is noticed well before the slice's start-to-close timeout.
// They live here, below both, so that internal/settings needs nothing of
// the activities.
const (
	DefaultCheckpointEvery = 10 * time.Second
	DefaultStallTimeout    = 5 * time.Minute
)
