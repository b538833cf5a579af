package dataset

import (
	"fmt"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
)

func checkShape(width, depth int) error {
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

// check reports the first array whose length disagrees with the shape.
func (r *Row) check(w, d int) error {
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

// clone is r with arrays of its own.
func (r Row) clone() Row {
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

// WriterBytes is what a ParquetWriter of spec's shape holds beside the rows
// it is given: the encoded floats of a row group, up to 64 MiB, where rows
// share groups. A row of a group of its own goes to the file as it is, and
// the writer holds only the plain levels of one row, a byte per value twice
// (half a row), while it encodes them for its first row.
func WriterBytes(spec bakeapi.Spec) int64 {
	if n := rowsPerGroup(spec.Width, spec.Depth); n > 1 {
		return n * RowBytes(spec)
	}
	return RowBytes(spec) / 2
}
