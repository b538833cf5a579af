package bakeclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/settings"
)

// Status is a bake as `whestbake status`, `watch` and `bake --wait` show
// it, collected at At. Its JSON is docs/CLI.md's whestbake.status/v1.
type Status struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	// State is the bake workflow's execution status as Temporal names it,
	// in lower case: running, completed, failed, canceled, terminated,
	// timed_out.
	State string `json:"state"`
	// Stage is the bake's BakeStage search attribute: seeding, baking,
	// combining, pushing, done; "" before the bake set one.
	Stage string    `json:"stage,omitempty"`
	Start time.Time `json:"started_at"`
	End   time.Time `json:"ended_at,omitzero"` // zero while running
	At    time.Time `json:"at"`
	// WebUI is the workflow's page in Temporal's Web UI, "" when the config
	// does not say where that is.
	WebUI  string  `json:"web_ui,omitempty"`
	Shape  Shape   `json:"shape"`
	Splits []Split `json:"splits"`
	// Pending are the activities Temporal has scheduled and not closed, of
	// the bake and its running splits.
	Pending []Pending `json:"pending"`
	// ProgressQueryFailed: no control worker answered a running split's
	// progress query, so its counts are the last ones seen.
	ProgressQueryFailed bool `json:"progress_query_failed"`
	// Stopped are the bake workflow's own activities, seeds, combine and
	// push, that were running when it ended without completing.
	Stopped []OpenActivity `json:"stopped,omitempty"`
	Result  *Result        `json:"result,omitempty"`
	Failure *Failure       `json:"failure,omitempty"`
}

// Shape is what the bake computes, and how it is cut into slices.
type Shape struct {
	Width     int    `json:"width"`
	Depth     int    `json:"depth"`
	NSamples  int64  `json:"n_samples"`
	Sampler   string `json:"sampler"`
	SliceSize int    `json:"slice_size"`
	// MaxInFlight is the slices in flight per split; 0 is auto, one per
	// GPU worker, as InFlightText says.
	MaxInFlight int `json:"max_in_flight"`
}

// Split is one split of the bake. Its counts never go down from one
// refresh of a Watch to the next, nor below what the bake's earlier runs
// committed: see donework.go.
type Split struct {
	Name          string `json:"name"`
	Stage         string `json:"stage"`
	MLPsDone      int    `json:"mlps_done"`
	MLPsTotal     int    `json:"mlps_total"`
	SlicesDone    int    `json:"slices_done"`
	SlicesTotal   int    `json:"slices_total"`
	SlicesRunning int    `json:"slices_running"`
	// MaxInFlight is the split's window now: the bake's, or auto's count of
	// GPU workers; 0 when unknown.
	MaxInFlight int       `json:"max_in_flight,omitempty"`
	StartedAt   time.Time `json:"started_at,omitzero"` // zero until the split workflow runs
	// Estimate is Done at the Status's At, ETASeconds Remaining then: nil
	// when unknown, 0 when merging soon.
	Estimate   float64 `json:"mlps_done_estimate"`
	ETASeconds *int64  `json:"eta_seconds,omitempty"`
	// CarriedOver: the counts are more than this run's own, kept from a
	// refresh before or from the bake's earlier runs, so they tell no pace.
	CarriedOver bool `json:"carried_over"`
	// Running are the heartbeats of the split's running slices.
	Running []RunningSlice `json:"running_slices,omitempty"`
	// History is what the split workflow's history says, once it has
	// closed, or always for Status; nil when not read.
	History *History `json:"history,omitempty"`
	// least is the most Done showed before, kept by keepDone.
	least float64
}

// RunningSlice is a running slice's last heartbeat.
type RunningSlice struct {
	Slice       int   `json:"slice"`
	MLPsDone    int   `json:"mlps_done"`
	MLPsTotal   int   `json:"mlps_total"`
	CurrentMLP  int   `json:"current_mlp"`
	SamplesDone int64 `json:"samples_done"`
	SamplesEach int64 `json:"samples_each"`
}

// Pending is an activity scheduled and not closed, as Temporal describes it.
type Pending struct {
	WorkflowID    string    `json:"workflow_id"`
	Activity      string    `json:"activity"`
	State         string    `json:"state"` // scheduled, started, cancel_requested, paused
	Attempt       int32     `json:"attempt"`
	MaxAttempts   int32     `json:"max_attempts"` // 0: unlimited
	LastHeartbeat time.Time `json:"last_heartbeat,omitzero"`
	// Details is the last heartbeat's details: a slice's progress in words,
	// anything else as its JSON.
	Details     string `json:"details,omitempty"`
	LastFailure string `json:"last_failure,omitempty"`
}

// Result is where a completed bake put its dataset.
type Result struct {
	Dataset        string `json:"dataset"` // s3://bucket/prefix
	ManifestSHA256 string `json:"manifest_sha256"`
	Release        string `json:"release,omitempty"`
	Hub            string `json:"hub,omitempty"`
	HubCommit      string `json:"hub_commit,omitempty"`
}

// Failure is why a bake ended without completing.
type Failure struct {
	// Message is the root cause, the innermost application error, after
	// the path that led to it, or "canceled".
	Message string `json:"message"`
	// Type is the root application error's type, one of bakeapi.Err*; ""
	// for a cancel, a termination or a timeout.
	Type         string `json:"type,omitempty"`
	NonRetryable bool   `json:"non_retryable,omitempty"`
}

// Running reports whether the bake workflow runs.
func (s Status) Running() bool {
	return s.State == stateWord(enums.WORKFLOW_EXECUTION_STATUS_RUNNING)
}

// Completed reports whether the bake completed.
func (s Status) Completed() bool {
	return s.State == stateWord(enums.WORKFLOW_EXECUTION_STATUS_COMPLETED)
}

// Err is nil unless the bake failed, terminated or timed out: status and
// watch report a cancelled bake, which is what was asked for, as a
// success.
func (s Status) Err() error {
	switch s.State {
	case stateWord(enums.WORKFLOW_EXECUTION_STATUS_RUNNING),
		stateWord(enums.WORKFLOW_EXECUTION_STATUS_COMPLETED),
		stateWord(enums.WORKFLOW_EXECUTION_STATUS_CANCELED):
		return nil
	}
	return fmt.Errorf("bake %s %s", s.ID, s.State)
}

// Done estimates finished MLPs, counting the running slices' heartbeats,
// never below what it showed before.
func (s Split) Done() float64 {
	d := float64(s.MLPsDone)
	for _, r := range s.Running {
		d += float64(r.MLPsDone)
		if r.SamplesEach > 0 && r.MLPsDone < r.MLPsTotal {
			d += float64(r.SamplesDone) / float64(r.SamplesEach)
		}
	}
	return min(max(d, s.least), float64(s.MLPsTotal))
}

// Remaining is the split's time left at now, and whether it is known: its
// elapsed time so far scaled by the work left, counting the running
// slices' heartbeats. It is measured up to now rather than to the last
// finished slice, so it never lies in the past and grows while nothing
// finishes; 0 once every MLP is done and the merge is next. It is unknown
// outside the baking stage, before any work is done, and while the counts
// are carried over rather than the run's own, whose pace they would not
// tell.
func (s Split) Remaining(now time.Time) (time.Duration, bool) {
	done := s.Done()
	switch {
	case s.Stage != bakeapi.StageBaking || s.StartedAt.IsZero() || done <= 0 || s.CarriedOver:
		return 0, false
	case done >= float64(s.MLPsTotal):
		return 0, true
	}
	elapsed := now.Sub(s.StartedAt)
	return time.Duration(float64(elapsed) * (float64(s.MLPsTotal) - done) / done), true
}

// snapshot fills the split's Estimate and ETASeconds as of at.
func (s *Split) snapshot(at time.Time) {
	s.Estimate = s.Done()
	if left, ok := s.Remaining(at); ok {
		sec := int64(left.Round(time.Second) / time.Second)
		s.ETASeconds = &sec
	}
}

// InFlightText is a bake's max-in-flight as the config writes it.
func InFlightText(n int) string {
	if n == 0 {
		return settings.AutoInFlight + " (one per GPU worker)"
	}
	return fmt.Sprint(n)
}

// Status collects bake id's state once, with every split's history read
// for its counts.
func (c *Client) Status(ctx context.Context, id string) (Status, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return Status{}, err
	}
	w := newWatcher(tc, c.cfg, id)
	w.counts = true
	return w.collect(ctx)
}

// stateWord is a workflow status in lower case, without its prefix.
func stateWord(s enums.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// failureOf is the root cause of a failed bake, the innermost application
// error with its type, after the path that led to it.
func failureOf(err error) *Failure {
	if err == nil { // nothing says why it ended
		return &Failure{Message: "no failure recorded"}
	}
	var root *temporal.ApplicationError
	for e := err; e != nil; e = errors.Unwrap(e) {
		if a, ok := e.(*temporal.ApplicationError); ok {
			root = a
		}
	}
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled):
		return &Failure{Message: "canceled"}
	case errors.As(err, &terminated):
		return &Failure{Message: "terminated: " + err.Error()}
	case root != nil && root.Type() != "" && root.Type() != "wrapError":
		retry := "retryable"
		if root.NonRetryable() {
			retry = "not retryable"
		}
		return &Failure{
			Message:      fmt.Sprintf("%s (%s, %s)", root.Message(), root.Type(), retry),
			Type:         root.Type(),
			NonRetryable: root.NonRetryable(),
		}
	case errors.As(err, &timeout):
		return &Failure{Message: fmt.Sprintf("timed out (%s): %v", timeout.TimeoutType(), err)}
	}
	return &Failure{Message: err.Error()}
}
