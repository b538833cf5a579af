package schema

// The eight columns of a row, in the order whestbench's make_features
// declares them. HF datasets casts every file to the features of the first
// one, so names and order are part of the format.
const (
	ColMLPID = iota
	ColName
	ColSeed
	ColWeights
	ColLayerMeans
	ColFinalMeans
	ColAvgVariance
	ColBreakdown
	NumColumns
)

// ColumnNames are the columns' names, by their Col* index.
var ColumnNames = [NumColumns]string{
	ColMLPID:       "mlp_id",
	ColName:        "mlp_name",
	ColSeed:        "mlp_seed",
	ColWeights:     "weights",
	ColLayerMeans:  "all_layer_means",
	ColFinalMeans:  "final_means",
	ColAvgVariance: "avg_variance",
	ColBreakdown:   "sampling_budget_breakdown",
}
