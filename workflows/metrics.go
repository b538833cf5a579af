package workflows

// The gauges SplitWorkflow reports through the SDK's metrics handler, tagged
// bake_id and split (the worker exports them with the SDK's own metrics).
const (
	MetricSplitMLPs          = "whestbake_split_mlps"           // MLPs in the split
	MetricSplitMLPsDone      = "whestbake_split_mlps_done"      // MLPs of committed slices
	MetricSplitSlicesRunning = "whestbake_split_slices_running" // BakeSlice activities in flight
)
