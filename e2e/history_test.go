package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/workflows"
)

// history is the full event history of a workflow run ("" = the latest).
func (s *stack) history(id, runID string) *historypb.History {
	s.t.Helper()
	var h historypb.History
	it := s.tc.GetWorkflowHistory(context.Background(), id, runID, false,
		enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			s.t.Fatalf("history of %s: %v", id, err)
		}
		h.Events = append(h.Events, e)
	}
	return &h
}

// workflowRun is one run of a workflow, which may have continued as new.
type workflowRun struct {
	ID      string // "" for the latest run
	History *historypb.History
}

// runs is every run of workflow id, newest first: the latest, then each run
// the one after it continued.
func (s *stack) runs(id string) []workflowRun {
	s.t.Helper()
	var out []workflowRun
	for run := ""; ; {
		h := s.history(id, run)
		out = append(out, workflowRun{ID: run, History: h})
		first := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
		if run = first.GetContinuedExecutionRunId(); run == "" {
			return out
		}
	}
}

// sliceRun is one completed BakeSlice as its split's history records it.
type sliceRun struct {
	In      bakeapi.BakeSliceInput
	Attempt int32
	Worker  string // the identity of the worker that ran it
	// LastFailure is a retry's: why the attempt before it failed.
	LastFailure string
	Out         bakeapi.BakeSliceOutput
	// Scheduled is when the split asked for the attempt (for a retry, the
	// first attempt's scheduling), Started when a worker took it.
	Scheduled, Started, Closed time.Time
}

// sliceRuns decodes every completed BakeSlice of a split workflow's latest run.
func (s *stack) sliceRuns(splitWorkflowID string) []sliceRun {
	s.t.Helper()
	return s.sliceRunsOf(s.history(splitWorkflowID, ""))
}

// sliceRunsOf decodes every completed BakeSlice of one run's history.
func (s *stack) sliceRunsOf(h *historypb.History) []sliceRun {
	s.t.Helper()
	dc := converter.GetDefaultDataConverter()
	type request struct {
		in bakeapi.BakeSliceInput
		at time.Time
	}
	scheduled := map[int64]request{}
	started := map[int64]*historypb.HistoryEvent{}
	var out []sliceRun
	for _, e := range h.Events {
		switch {
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			a := e.GetActivityTaskScheduledEventAttributes()
			if a.GetActivityType().GetName() != "BakeSlice" {
				continue
			}
			var in bakeapi.BakeSliceInput
			if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
				s.t.Fatal(err)
			}
			scheduled[e.GetEventId()] = request{in, e.GetEventTime().AsTime()}
		case e.GetActivityTaskStartedEventAttributes() != nil:
			started[e.GetEventId()] = e
		case e.GetActivityTaskCompletedEventAttributes() != nil:
			a := e.GetActivityTaskCompletedEventAttributes()
			req, ok := scheduled[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			st := started[a.GetStartedEventId()]
			attempt := st.GetActivityTaskStartedEventAttributes()
			r := sliceRun{
				In:          req.in,
				Attempt:     attempt.GetAttempt(),
				Worker:      attempt.GetIdentity(),
				Scheduled:   req.at,
				LastFailure: attempt.GetLastFailure().String(),
				Started:     st.GetEventTime().AsTime(),
				Closed:      e.GetEventTime().AsTime(),
			}
			if err := dc.FromPayloads(a.GetResult(), &r.Out); err != nil {
				s.t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	return out
}

// replayLive replays a workflow's latest run from the live server against
// today's workflow code.
func (s *stack) replayLive(t *testing.T, id string) {
	t.Helper()
	s.replayRun(t, id, "")
}

// replayRun replays one run of a workflow ("" = the latest) from the live
// server against today's workflow code. It replays the fetched history as
// the replay tests do: the SDK's ReplayWorkflowExecution (1.50) reports a
// TMPRL1100 lookup failure on histories with a local activity in the first
// workflow task, which both this replayer and a worker replaying the history
// after a crash take fine (TestAutoInFlight kills the control worker).
func (s *stack) replayRun(t *testing.T, id, runID string) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(workflows.BakeWorkflow)
	r.RegisterWorkflow(workflows.SplitWorkflow)
	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	options := worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id, RunID: runID},
	}
	err := r.ReplayWorkflowHistoryWithOptions(quiet, s.history(id, runID), options)
	if err != nil {
		t.Errorf("replaying %s (run %q) from the server: %v", id, runID, err)
	}
}

// exportHistories writes the history of every workflow run on the server as
// JSON (the `temporal workflow show --output json` form) under dir, and
// returns the files.
func (s *stack) exportHistories(dir string) []string {
	s.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	ctx := context.Background()
	var files []string
	var token []byte
	for {
		resp, err := s.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace:     devstack.Namespace,
			NextPageToken: token,
		})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, ex := range resp.GetExecutions() {
			id := ex.GetExecution().GetWorkflowId()
			run := ex.GetExecution().GetRunId()
			indented := temporalproto.CustomJSONMarshalOptions{Indent: "  "}
			data, err := indented.Marshal(s.history(id, run))
			if err != nil {
				s.t.Fatal(err)
			}
			f := filepath.Join(dir, url.PathEscape(id)+"-"+run+".json")
			if err := os.WriteFile(f, data, 0o644); err != nil {
				s.t.Fatal(err)
			}
			files = append(files, f)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return files
		}
	}
}
