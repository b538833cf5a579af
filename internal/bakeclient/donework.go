package bakeclient

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/whestbake/whestbake/bakeapi"
)

// Done work is done: the counts status, watch and bake --wait show for a
// split never go down. Two things would otherwise pull them back:
//
//   - a progress query that fails because no control worker answers, or a
//     split that a refresh does not find, leaves the counts at 0;
//   - a restarted bake's split counts only what its own run committed, from
//     0, while the slices that earlier runs committed wait for a worker to
//     reuse them. That takes a moment each, but only once a worker is there
//     to take them.
//
// So each split shows the most a refresh has seen, and at least what the
// bake's earlier runs committed, read once from their histories.

// doneWork is finished work of one split.
type doneWork struct {
	MLPs, Slices int
	Share        float64 // MLPs, counting the running slices' heartbeats: Split.Done
}

// keepDone raises sp's counts to the most this watcher has shown for the
// split and to what earlier runs committed. Where the counts shown are
// carried over, not the run's own, the running slices may be among them:
// their heartbeats add nothing, and no ETA is claimed, see Split.Remaining.
func (w *watcher) keepDone(ctx context.Context, sp *Split, wid string) {
	earlier := w.earlierRuns(ctx, wid)
	own := sp.Done()
	seen := w.seen[sp.Name]
	seen.MLPs = max(seen.MLPs, sp.MLPsDone, earlier.MLPs)
	seen.Slices = max(seen.Slices, sp.SlicesDone, earlier.Slices)
	seen.Share = max(seen.Share, own, float64(seen.MLPs))
	w.seen[sp.Name] = seen
	if seen.MLPs > sp.MLPsDone {
		sp.Running = nil
		sp.CarriedOver = true
	}
	sp.MLPsDone = seen.MLPs
	sp.SlicesDone = seen.Slices
	sp.least = seen.Share
}

// earlierRuns is what the runs of split workflow wid that ended without
// completing, the runs of the bake before its restart, committed, as the
// slices of this run count them: MLPs by their union, slices where the
// slicing is the same. It is read once, from closed histories, and retried
// at the next refresh after an error.
func (w *watcher) earlierRuns(ctx context.Context, wid string) doneWork {
	if d, ok := w.carried[wid]; ok {
		return d
	}
	runs, err := w.closedRuns(ctx, wid)
	if err != nil {
		return doneWork{}
	}
	committed := map[int]bakeapi.Range{}
	for _, runID := range runs {
		h, err := w.history(ctx, wid, runID, true)
		if err != nil {
			return doneWork{}
		}
		for k, r := range h.committed {
			committed[k] = r
		}
	}
	d := w.countCommitted(wid, committed)
	w.carried[wid] = d
	return d
}

// closedRuns lists the runs of wid that ended without completing and
// without continuing as new: the last run of each earlier chain.
func (w *watcher) closedRuns(ctx context.Context, wid string) ([]string, error) {
	var runs []string
	req := &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: w.cfg.Temporal.Namespace,
		Query:     fmt.Sprintf("WorkflowId = '%s'", wid),
	}
	for {
		resp, err := w.temporal.ListWorkflow(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			switch e.GetStatus() {
			case enums.WORKFLOW_EXECUTION_STATUS_RUNNING, enums.WORKFLOW_EXECUTION_STATUS_COMPLETED,
				enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
			default:
				runs = append(runs, e.GetExecution().GetRunId())
			}
		}
		if len(resp.GetNextPageToken()) == 0 {
			return runs, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// countCommitted counts committed slices, slice → MLPs, of split workflow
// wid: its MLPs, each once, and the slices that are slices of this run.
func (w *watcher) countCommitted(wid string, committed map[int]bakeapi.Range) doneWork {
	var split *bakeapi.SplitSpec
	for i, s := range w.input.Splits {
		if bakeapi.SplitWorkflowID(w.bakeID, s.Name) == wid {
			split = &w.input.Splits[i]
		}
	}
	if split == nil || len(committed) == 0 {
		return doneWork{}
	}
	count := bakeapi.SliceCount(split.NMLPs, w.input.SliceSize)
	var d doneWork
	ranges := make([]bakeapi.Range, 0, len(committed))
	for k, r := range committed {
		ranges = append(ranges, r)
		if now, err := bakeapi.SliceRange(k, count, split.NMLPs); err == nil && now == r {
			d.Slices++
		}
	}
	// Runs sliced alike commit disjoint ranges; a run with another
	// slice-size may overlap them, and an MLP counts once.
	slices.SortFunc(ranges, func(a, b bakeapi.Range) int { return cmp.Compare(a.Start, b.Start) })
	covered := 0 // MLPs [0, covered) are counted
	for _, r := range ranges {
		start, end := max(r.Start, covered), min(r.End, split.NMLPs)
		if end > start {
			d.MLPs += end - start
			covered = end
		}
	}
	return d
}
