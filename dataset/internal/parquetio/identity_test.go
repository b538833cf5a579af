package parquetio

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// The spliced writer must give exactly the bytes parquet-go's own column
// writers give (writeParquetOracle), page cuts, CRCs, statistics, page
// indexes and footer included, across page and row-group boundaries.
func TestWriterMatchesParquetGo(t *testing.T) {
	for _, tc := range []struct {
		shape bakeapi.Spec
		rows  int
	}{
		{bakeapi.Spec{Width: 4, Depth: 2}, 3},
		{bakeapi.Spec{Width: 8, Depth: 3}, 200},
		{bakeapi.Spec{Width: 64, Depth: 4}, 70},
		{bakeapi.Spec{Width: 256, Depth: 8}, 40},
		{bakeapi.Spec{Width: 100, Depth: 3}, 65}, // ragged last row group
		{bakeapi.Spec{Width: 4, Depth: 2}, 0},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", tc.shape.Width, tc.shape.Depth, tc.rows), func(t *testing.T) {
			checkMatchesOracle(t, tc.shape, schematest.Rows(tc.shape, 0, tc.rows))
		})
	}
}

// A row group of one row (an MLP above the row-group bound, 64 MiB of
// floats) is streamed from the row to the file rather than buffered; its
// bytes must be the same, whether the weights fill a page on their own
// (256×8) or not (64×4). The bound is lowered so that parquet-go can write
// the reference in the test's time and memory.
func TestWriterMatchesParquetGoOneRowGroups(t *testing.T) {
	defer func(b int64) { rowGroupFloatBytes = b }(rowGroupFloatBytes)
	rowGroupFloatBytes = 64 << 10
	for _, shape := range []bakeapi.Spec{{Width: 256, Depth: 8}, {Width: 64, Depth: 4}} {
		if n := rowsPerGroup(shape.Width, shape.Depth); n != 1 {
			t.Fatalf("%d×%d: %d rows per group, want 1", shape.Width, shape.Depth, n)
		}
		t.Run(fmt.Sprintf("%dx%d", shape.Width, shape.Depth), func(t *testing.T) {
			rows := schematest.Rows(shape, 0, 3)
			rows[1].Weights[7] = float32(math.NaN())
			rows[2].LayerMeans[0] = float32(math.Copysign(0, -1))
			checkMatchesOracle(t, shape, rows)
		})
	}
}

// Page and chunk statistics must treat NaN, signed zeros and infinities as
// parquet-go does, whichever page or row they fall in.
func TestWriterMatchesParquetGoSpecialFloats(t *testing.T) {
	shape := bakeapi.Spec{Width: 64, Depth: 4}
	rows := schematest.Rows(shape, 0, 9)
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	for _, r := range rows[:3] { // 64×4 weights go 3 rows to a page
		for i := range r.Weights {
			r.Weights[i] = nan // an all-NaN page first
		}
	}
	rows[3].Weights[5], rows[3].Weights[9] = nan, negZero
	rows[4].Weights[0], rows[4].Weights[1] = 0, negZero
	rows[6].Weights[7], rows[7].Weights[3] = inf, -inf
	for i := range rows[6].LayerMeans {
		rows[6].LayerMeans[i] = negZero
	}
	rows[7].FinalMeans[0] = nan
	checkMatchesOracle(t, shape, rows)
}

func checkMatchesOracle(t testing.TB, shape bakeapi.Spec, rows []schema.Row) {
	var want, got bytes.Buffer
	if err := writeParquetOracle(&want, shape, rows); err != nil {
		t.Fatal(err)
	}
	if err := Write(&got, shape, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		w, g := want.Bytes(), got.Bytes()
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		t.Fatalf("%d bytes, parquet-go wrote %d; first difference at byte %d", len(g), len(w), i)
	}
}
