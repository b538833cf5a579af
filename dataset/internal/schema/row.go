// Package schema is whestbench's schema 3.0 as every format of a dataset
// shares it: the row of eight columns (Row), the checks every reader
// applies to a row, the huggingface features text and the Arrow schema that
// readers build column types from, and InvalidDatasetError for whatever
// breaks the schema's rules. The parquet files (parquetio) and the prepared
// Arrow tree (prepared) are two encodings of these rows.
package schema

import (
	"fmt"
	"math"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
)

// CheckShape refuses a width or depth that is not positive.
func CheckShape(width, depth int) error {
	if width <= 0 || depth <= 0 {
		return fmt.Errorf("dataset: shape width=%d depth=%d: both must be positive", width, depth)
	}
	return nil
}

// Row is one MLP: one parquet row. Arrays are flattened row-major:
// Weights[l*W*W + i*W + j] is layer l's weight from input i to output j (the
// network computes h_l = relu(h_{l-1} @ W_l)), LayerMeans[l*W + j] the mean of
// neuron j after layer l.
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

// Check reports the first array whose length disagrees with width w and
// depth d.
func (r *Row) Check(w, d int) error {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"weights", len(r.Weights), d * w * w},
		{"all_layer_means", len(r.LayerMeans), d * w},
		{"final_means", len(r.FinalMeans), w},
	} {
		if c.got != c.want {
			return fmt.Errorf("row mlp_id=%d: %s has %d values, shape width=%d depth=%d needs %d",
				r.MLPID, c.name, c.got, w, d, c.want)
		}
	}
	return nil
}

// MaxAvgVariance bounds avg_variance: a variance of float32 values, which
// lie within ±math.MaxFloat32, is at most MaxFloat32². A larger number is
// no statistic of such values (and W times it would overflow float64).
const MaxAvgVariance = float64(math.MaxFloat32) * math.MaxFloat32

// CheckValues refuses a row whose numbers no bake can produce: a NaN or an
// infinity in any array or in avg_variance, or an avg_variance beyond
// MaxAvgVariance. Every reader of a dataset sees rows through this check, so
// a comparison, a merge or an upload never works with such values (and
// JSON, which has no NaN or infinity, can print every row it reads).
func (r *Row) CheckValues() error {
	for _, c := range []struct {
		name   string
		values []float32
	}{{"weights", r.Weights}, {"all_layer_means", r.LayerMeans}, {"final_means", r.FinalMeans}} {
		if i := firstNonFinite(c.values); i >= 0 {
			return fmt.Errorf("row mlp_id=%d: %s[%d] is %v; a dataset holds finite numbers only",
				r.MLPID, c.name, i, c.values[i])
		}
	}
	if v := r.AvgVariance; math.IsNaN(v) || math.Abs(v) > MaxAvgVariance {
		return fmt.Errorf("row mlp_id=%d: avg_variance is %v; "+
			"a variance of float32 values is a finite number of at most %.4g",
			r.MLPID, v, MaxAvgVariance)
	}
	return nil
}

// firstNonFinite is the index of the first NaN or infinity in values, or
// -1: a float32 whose exponent bits are all ones. One test of the bits per
// value keeps the check a small part of reading a row (a W=256, D=8 row
// has half a million weights).
func firstNonFinite(values []float32) int {
	const exponent = 0x7f800000
	for i, v := range values {
		if math.Float32bits(v)&exponent == exponent {
			return i
		}
	}
	return -1
}

// Clone is r with arrays of its own.
func (r Row) Clone() Row {
	r.Weights = slices.Clone(r.Weights)
	r.LayerMeans = slices.Clone(r.LayerMeans)
	r.FinalMeans = slices.Clone(r.FinalMeans)
	return r
}

// RowBytes is the in-memory size of one Row of spec's shape (its float
// arrays; the names and the breakdown text are small).
func RowBytes(spec bakeapi.Spec) int64 {
	w, d := int64(spec.Width), int64(spec.Depth)
	return 4 * (d*w*w + d*w + w)
}
