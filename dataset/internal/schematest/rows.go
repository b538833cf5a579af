// Package schematest holds what the tests of dataset and of its format
// packages share: synthetic rows, error checks, and the independent readers
// of dataset/testdata/readers, DuckDB, hyparquet and apache-arrow run by
// Node, which judge the files whestbake writes.
package schematest

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/breakdown"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// Rows makes n synthetic rows of shape with mlp_id start.. and values
// that differ per row, so misplaced rows are noticed.
func Rows(shape bakeapi.Spec, start, n int) []schema.Row {
	w, d := shape.Width, shape.Depth
	rows := make([]schema.Row, n)
	for i := range rows {
		id := start + i
		rng := rand.New(rand.NewPCG(uint64(id), 7))
		r := schema.Row{
			MLPID:       int32(id),
			Name:        "mlp-" + string(rune('a'+id%26)),
			Seed:        int64(1000 + id),
			Weights:     make([]float32, d*w*w),
			LayerMeans:  make([]float32, d*w),
			FinalMeans:  make([]float32, w),
			AvgVariance: rng.Float64(),
			Breakdown:   breakdown.Text(w, d, 100, 1024, 0.5),
		}
		for j := range r.Weights {
			r.Weights[j] = float32(rng.NormFloat64())
		}
		for j := range r.LayerMeans {
			r.LayerMeans[j] = float32(rng.Float64())
		}
		copy(r.FinalMeans, r.LayerMeans[(d-1)*w:])
		rows[i] = r
	}
	return rows
}

// RowsEqual reports whether a and b hold the same values bit for bit, NaN
// payloads and the sign of zero included, column by column.
func RowsEqual(a, b schema.Row) bool {
	for i := range schema.Columns {
		if !sameBits(schema.Columns[i].Of(&a), schema.Columns[i].Of(&b)) {
			return false
		}
	}
	return true
}

// sameBits says whether the fields x and y, of one column of two rows,
// hold the same bits.
func sameBits(x, y any) bool {
	same32 := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	switch x := x.(type) {
	case *[]float32:
		return slices.EqualFunc(*x, *y.(*[]float32), same32)
	case *float64:
		return math.Float64bits(*x) == math.Float64bits(*y.(*float64))
	}
	return reflect.DeepEqual(x, y)
}

// WantErr fails unless err matches *T by errors.As and mentions every
// fragment.
func WantErr[T error](t *testing.T, err error, fragments ...string) {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("got error %v (%T), want %T", err, err, target)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}
