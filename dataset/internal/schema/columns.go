package schema

// The columns of a row, in the order whestbench's make_features declares
// them in whestbench/dataset_io.py make_features. HF datasets casts every
// file to the features of the first one, so names and order are part of
// the format.
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

// Row is one MLP: one parquet row, a field a column of Columns. Arrays are
// flattened row-major: Weights[l*W*W + i*W + j] is layer l's weight from
// input i to output j, as the network computes h_l = relu(h_{l-1} @ W_l),
// and LayerMeans[l*W + j] the mean of neuron j after layer l.
type Row struct {
	MLPID       int32
	Name        string
	Seed        int64
	Weights     []float32 // depth*width*width
	LayerMeans  []float32 // depth*width
	FinalMeans  []float32 // width; equal to the last layer of LayerMeans
	AvgVariance float64
	Breakdown   string // sampling_budget_breakdown JSON text
}

// Columns is the one table of the columns, by their Col* index: the
// parquet schema, the Arrow schema, the huggingface features, the card's
// table, the readers and the prepared tree's encoder and check all take
// their columns from it. A column is a scalar of its Type, or with a
// Shape an array of float32 values.
var Columns = [NumColumns]Column{
	ColMLPID: {
		Name: "mlp_id", Type: Int32,
		Doc: "index of the network in the split, ascending from 0",
		Of:  func(r *Row) any { return &r.MLPID },
	},
	ColName: {
		Name: "mlp_name", Type: String,
		Doc: "a readable name derived from the seed (faker 37.12.0, en_US, " +
			"`first-last`, suffixed on collision)",
		Of: func(r *Row) any { return &r.Name },
	},
	ColSeed: {
		Name: "mlp_seed", Type: Int64,
		Doc: "the network's seed: everything else in the row is a function of it, " +
			"n_samples and the sampler",
		Of: func(r *Row) any { return &r.Seed },
	},
	ColWeights: {
		Name: "weights", Type: Float32, Shape: []Dim{Depth, Width, Width},
		Doc: "`weights[l][i][j]`: weight of layer l from input i to output j",
		Of:  func(r *Row) any { return &r.Weights },
	},
	ColLayerMeans: {
		Name: "all_layer_means", Type: Float32, Shape: []Dim{Depth, Width},
		Doc: "mean of each neuron after each layer",
		Of:  func(r *Row) any { return &r.LayerMeans },
	},
	ColFinalMeans: {
		Name: "final_means", Type: Float32, Shape: []Dim{Width},
		Doc: "the last layer of `all_layer_means`: what estimators are scored against",
		Of:  func(r *Row) any { return &r.FinalMeans },
	},
	ColAvgVariance: {
		Name: "avg_variance", Type: Float64,
		Doc: "mean over output neurons of the sample variance at the last layer",
		Of:  func(r *Row) any { return &r.AvgVariance },
	},
	ColBreakdown: {
		Name: "sampling_budget_breakdown", Type: String, JSON: true,
		Doc: "closed-form FLOP count of whestbench's reference sampler at this bake's chunking; " +
			"timings are left at 0 so that a row depends only on its seed " +
			"(bake times are in the logs)",
		Of: func(r *Row) any { return &r.Breakdown },
	},
}

// Column is one column of the row.
type Column struct {
	Name string
	// Type is a scalar's type, or an array's element type.
	Type Type
	// Shape is an array's dimensions, outside in; a scalar has none. An
	// array of one dimension is datasets' List of that length, an Arrow
	// fixed_size_list, one of two to five its Array2D to Array5D.
	Shape []Dim
	// JSON marks a string column whose text is a JSON document.
	JSON bool
	// Doc is what the card says the column means.
	Doc string
	// Of is the column's field of r: a *[]float32 for an array, else an
	// *int32, *int64, *float64 or *string as Type says.
	Of func(r *Row) any
}

// Type is a column's value type.
type Type int

const (
	Int32 Type = iota
	Int64
	Float32
	Float64
	String
)

// String is t as datasets' Value in datasets/features/features.py names its dtype.
func (t Type) String() string {
	return [...]string{Int32: "int32", Int64: "int64", Float32: "float32",
		Float64: "float64", String: "string"}[t]
}

// Dim is one dimension of an array column: the MLP's depth or its width.
type Dim int

const (
	Depth Dim = iota
	Width
)

// Array says whether c is an array column.
func (c *Column) Array() bool { return len(c.Shape) > 0 }

// Dims are c's dimensions for width w and depth d, outside in.
func (c *Column) Dims(w, d int) []int {
	dims := make([]int, len(c.Shape))
	for i, s := range c.Shape {
		dims[i] = s.of(w, d)
	}
	return dims
}

// Len is how many values an array column holds in a row of width w and
// depth d; 1 for a scalar.
func (c *Column) Len(w, d int) int {
	n := 1
	for _, s := range c.Shape {
		n *= s.of(w, d)
	}
	return n
}

// of is the dimension's length for width w and depth d.
func (s Dim) of(w, d int) int {
	if s == Depth {
		return d
	}
	return w
}

// Floats is array column c's values in r.
func (c *Column) Floats(r *Row) []float32 { return *c.Of(r).(*[]float32) }
