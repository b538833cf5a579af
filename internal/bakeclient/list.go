package bakeclient

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
)

// ListedBake is one bake of List. Its JSON is an element of docs/CLI.md's
// whestbake.list/v1.
type ListedBake struct {
	ID    string    `json:"id"`
	State string    `json:"state"` // as Status.State
	Stage string    `json:"stage,omitempty"`
	Start time.Time `json:"started_at"`
	End   time.Time `json:"ended_at,omitzero"` // zero while running
}

// List returns the limit most recent bakes of the namespace, newest first.
func (c *Client) List(ctx context.Context, limit int) ([]ListedBake, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	// The same query finds them in the Web UI's list view.
	resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: c.cfg.Temporal.Namespace,
		PageSize:  int32(limit),
		Query: fmt.Sprintf("WorkflowType = 'BakeWorkflow' AND %s IS NOT NULL",
			bakeapi.BakeIDAttribute),
	})
	if err != nil {
		return nil, fmt.Errorf("listing bakes: %w", err)
	}
	dc := converter.GetDefaultDataConverter()
	bakes := []ListedBake{}
	for _, e := range resp.GetExecutions() {
		id, ok := bakeapi.BakeIDFromWorkflowID(e.GetExecution().GetWorkflowId())
		if !ok {
			continue
		}
		b := ListedBake{ID: id, State: stateWord(e.GetStatus()), Start: e.GetStartTime().AsTime()}
		if p := e.GetSearchAttributes().GetIndexedFields()[bakeapi.BakeStageAttribute]; p != nil {
			_ = dc.FromPayload(p, &b.Stage)
		}
		if e.GetCloseTime() != nil {
			b.End = e.GetCloseTime().AsTime()
		}
		bakes = append(bakes, b)
	}
	return bakes, nil
}
