package workflows

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// The gauges SplitWorkflow reports through the SDK's metrics handler, tagged
// bake_id and split. The worker exports them with the SDK's own metrics.
const (
	MetricSplitMLPs          = "whestbake_split_mlps"           // MLPs in the split
	MetricSplitMLPsDone      = "whestbake_split_mlps_done"      // MLPs of committed slices
	MetricSplitSlicesRunning = "whestbake_split_slices_running" // BakeSlice activities in flight
)

// gauges are a split's progress gauges for the fleet dashboard's ETA,
// through the SDK's metrics handler: not commands, so they change no
// history, and the SDK mutes them while replaying. After a control worker
// restarts they show again with the next finished slice.
type gauges struct{ handler client.MetricsHandler }

func newGauges(ctx workflow.Context, bakeID, split string) gauges {
	return gauges{workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		"bake_id": bakeID,
		"split":   split,
	})}
}

func (g gauges) mlps(n int) { g.handler.Gauge(MetricSplitMLPs).Update(float64(n)) }

func (g gauges) progress(mlpsDone, running int) {
	g.handler.Gauge(MetricSplitMLPsDone).Update(float64(mlpsDone))
	g.handler.Gauge(MetricSplitSlicesRunning).Update(float64(running))
}
