// Package schema is whestbench's schema 3.0 as every format of a dataset
// shares it: the one table of the columns, Columns, and the row they make,
// Row, the checks every reader applies to a row, the huggingface
// features text and the Arrow schema that readers build column types
// from, and InvalidDatasetError for whatever breaks the schema's rules.
// The parquet files of parquetio and the prepared Arrow tree of prepared are
// two encodings of these rows, and the card a description of them; each
// takes the columns from the table.
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

// Check reports the first array whose length disagrees with width w and
// depth d.
func (r *Row) Check(w, d int) error {
	for i := range Columns {
		c := &Columns[i]
		if !c.Array() {
			continue
		}
		if got, want := len(c.Floats(r)), c.Len(w, d); got != want {
			return fmt.Errorf("row mlp_id=%d: %s has %d values, shape width=%d depth=%d needs %d",
				r.MLPID, c.Name, got, w, d, want)
		}
	}
	return nil
}

// MaxAvgVariance bounds avg_variance: a variance of float32 values, which
// lie within ±math.MaxFloat32, is at most MaxFloat32². A larger number is
// no statistic of such values, and W times it would overflow float64.
const MaxAvgVariance = float64(math.MaxFloat32) * math.MaxFloat32

// CheckValues refuses a row whose numbers no bake can produce: a NaN or an
// infinity in any array or in avg_variance, or an avg_variance beyond
// MaxAvgVariance. Every reader of a dataset sees rows through this check, so
// a comparison, a merge or an upload never works with such values, and
// JSON, which has no NaN or infinity, can print every row it reads.
func (r *Row) CheckValues() error {
	for i := range Columns {
		c := &Columns[i]
		if !c.Array() {
			continue
		}
		values := c.Floats(r)
		if j := firstNonFinite(values); j >= 0 {
			return fmt.Errorf("row mlp_id=%d: %s[%d] is %v; a dataset holds finite numbers only",
				r.MLPID, c.Name, j, values[j])
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
// value keeps the check a small part of reading a row: a W=256, D=8 row
// has half a million weights.
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
	for i := range Columns {
		if Columns[i].Array() {
			p := Columns[i].Of(&r).(*[]float32)
			*p = slices.Clone(*p)
		}
	}
	return r
}

// RowBytes is the in-memory size of one Row of spec's shape: its float
// arrays, as the names and the breakdown text are small.
func RowBytes(spec bakeapi.Spec) int64 {
	var n int64
	for i := range Columns {
		if c := &Columns[i]; c.Array() {
			n += 4 * int64(c.Len(spec.Width, spec.Depth))
		}
	}
	return n
}
