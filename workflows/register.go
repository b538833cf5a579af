package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// Registry is where workflows are registered: a worker, a replayer or a test environment.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// Register registers both workflows under their bakeapi names, the names
// starters and parent workflows use.
func Register(r Registry) {
	r.RegisterWorkflowWithOptions(
		BakeWorkflow,
		workflow.RegisterOptions{Name: bakeapi.BakeWorkflowName},
	)
	r.RegisterWorkflowWithOptions(
		SplitWorkflow,
		workflow.RegisterOptions{Name: bakeapi.SplitWorkflowName},
	)
}
