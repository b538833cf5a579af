package dataset

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// createdBy is pinned so that equal rows give byte-identical files no matter
// which build wrote them (parquet-go's default embeds its build hash).
// Change it only together with the writer options below.
const createdBy = "whestbake (parquet-go v0.32.0)"

// rowGroupFloatBytes bounds the float payload of one row group. The writer
// holds a whole row group in memory until it is flushed, and pyarrow cannot
// convert a nested column whose row group decodes into a chunked array, so
// groups stay modest: 64 rows of a small shape, and down to one row when a
// single MLP is larger than the bound (width 1024 × depth 16 is 67 MB).
const (
	rowGroupFloatBytes = 64 << 20
	maxRowsPerGroup    = 64
)

func rowsPerGroup(s Shape) int64 {
	rowBytes := 4 * int64(s.Depth*s.Width*s.Width+s.Depth*s.Width+s.Width)
	return max(1, min(maxRowsPerGroup, rowGroupFloatBytes/rowBytes))
}

// ParquetWriter streams rows of one shape into a whestbench parquet file.
// Rows are flushed in bounded row groups, so a file of many large MLPs never
// needs more than one row group in memory.
type ParquetWriter struct {
	shape Shape
	w     *parquet.GenericWriter[any] // rows go in as parquet.Row values, not Go structs
	row   parquet.Row                 // reused between rows: a large MLP has millions of values
}

// NewParquetWriter starts a file on out. Close must be called to write the
// footer; a file without it is unreadable.
func NewParquetWriter(out io.Writer, shape Shape) (*ParquetWriter, error) {
	if err := shape.validate(); err != nil {
		return nil, err
	}
	cfg, err := parquet.NewWriterConfig(
		rowSchema(),
		parquet.MaxRowsPerRowGroup(rowsPerGroup(shape)),
		parquet.KeyValueMetadata(hfMetadataKey, featuresJSON(shape)),
		// Min/max of a JSON document is meaningless and would store each
		// page's extreme breakdowns again in page headers and the footer.
		parquet.SkipPageBounds(columns[colBreakdown].name),
		parquet.SkipPageStatistics(columns[colBreakdown].name),
	)
	if err != nil {
		return nil, fmt.Errorf("dataset: parquet writer options: %w", err)
	}
	cfg.CreatedBy = createdBy
	w, d := shape.Width, shape.Depth
	return &ParquetWriter{
		shape: shape,
		w:     parquet.NewGenericWriter[any](out, cfg),
		row:   make(parquet.Row, 0, 5+d*w*w+d*w+w), // 5 scalar columns, then the three arrays
	}, nil
}

// Write appends rows. Each row's arrays must match the writer's shape.
func (pw *ParquetWriter) Write(rows ...Row) error {
	for i := range rows {
		if err := rows[i].check(pw.shape); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
		pw.row = appendRow(pw.row[:0], &rows[i], pw.shape)
		if _, err := pw.w.WriteRows([]parquet.Row{pw.row}); err != nil {
			return fmt.Errorf("dataset: writing parquet row mlp_id=%d: %w", rows[i].MLPID, err)
		}
	}
	return nil
}

// Close flushes the last row group and writes the footer.
func (pw *ParquetWriter) Close() error {
	if err := pw.w.Close(); err != nil {
		return fmt.Errorf("dataset: finishing parquet file: %w", err)
	}
	return nil
}

// WriteParquet writes rows as one whestbench parquet file. Equal shape and
// rows give byte-identical output.
func WriteParquet(w io.Writer, shape Shape, rows []Row) error {
	pw, err := NewParquetWriter(w, shape)
	if err != nil {
		return err
	}
	if err := pw.Write(rows...); err != nil {
		return err
	}
	return pw.Close()
}

// appendRow flattens r into parquet values with explicit levels. Every value
// is present, so each leaf sits at its column's maximum definition level;
// repetition levels mark where each nested list starts.
func appendRow(dst parquet.Row, r *Row, s Shape) parquet.Row {
	scalar := func(v parquet.Value, col int) parquet.Value { return v.Level(0, 1, col) }
	dst = append(dst,
		scalar(parquet.Int32Value(r.MLPID), colMLPID),
		scalar(parquet.ByteArrayValue([]byte(r.Name)), colName),
		scalar(parquet.Int64Value(r.Seed), colSeed),
	)
	w := s.Width
	dst = appendList(dst, r.Weights, []int{w * w, w, 1}, colWeights)
	dst = appendList(dst, r.LayerMeans, []int{w, 1}, colLayerMeans)
	dst = appendList(dst, r.FinalMeans, []int{1}, colFinalMeans)
	return append(dst,
		scalar(parquet.DoubleValue(r.AvgVariance), colAvgVariance),
		scalar(parquet.ByteArrayValue([]byte(r.Breakdown)), colBreakdown),
	)
}

// appendList writes a row-major array as nested lists. strides[j] is the
// number of leaf values per element at nesting level j; a value whose index
// is a multiple of strides[j] (and of no outer stride) starts a new element
// at level j, which is repetition level j+1. The first value starts the row.
func appendList(dst parquet.Row, vals []float32, strides []int, col int) parquet.Row {
	def := columns[col].maxDef()
	for k, v := range vals {
		dst = append(dst, parquet.FloatValue(v).Level(listRepLevel(k, strides), def, col))
	}
	return dst
}

func listRepLevel(k int, strides []int) int {
	if k == 0 {
		return 0
	}
	for j, st := range strides {
		if k%st == 0 {
			return j + 1
		}
	}
	return len(strides) // unreachable: the innermost stride is 1
}
