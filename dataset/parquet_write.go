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
//
// Each row goes to parquet-go's column writers one column at a time, with
// repetition levels copied from a per-shape pattern: assembling a whole
// parquet.Row first would hold every value of a large MLP twice more.
type ParquetWriter struct {
	shape    Shape
	w        *parquet.GenericWriter[any]
	perGroup int64 // rows per row group
	inGroup  int64 // rows written to the current row group
	reps     [numColumns][]byte
	vals     []parquet.Value // reused for every column of every row
}

// NewParquetWriter starts a file on out. Close must be called to write the
// footer; a file without it is unreadable.
func NewParquetWriter(out io.Writer, shape Shape) (*ParquetWriter, error) {
	if err := shape.validate(); err != nil {
		return nil, err
	}
	perGroup := rowsPerGroup(shape)
	cfg, err := parquet.NewWriterConfig(
		rowSchema(),
		parquet.MaxRowsPerRowGroup(perGroup),
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
	pw := &ParquetWriter{
		shape:    shape,
		w:        parquet.NewGenericWriter[any](out, cfg),
		perGroup: perGroup,
		vals:     make([]parquet.Value, 0, listLen(colWeights, shape)),
	}
	for col, strides := range listStrides(shape) {
		if strides != nil {
			pw.reps[col] = repPattern(listLen(col, shape), strides)
		}
	}
	return pw, nil
}

// Write appends rows. Each row's arrays must match the writer's shape.
func (pw *ParquetWriter) Write(rows ...Row) error {
	for i := range rows {
		if err := rows[i].check(pw.shape); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
		if err := pw.writeRow(&rows[i]); err != nil {
			return fmt.Errorf("dataset: writing parquet row mlp_id=%d: %w", rows[i].MLPID, err)
		}
	}
	return nil
}

func (pw *ParquetWriter) writeRow(r *Row) error {
	cols := pw.w.ColumnWriters()
	for col := range numColumns {
		pw.vals = appendColumn(pw.vals[:0], r, col, pw.reps[col])
		if _, err := cols[col].WriteRowValues(pw.vals); err != nil {
			return err
		}
	}
	clear(pw.vals) // drop the byte-array references to the caller's strings
	// A full row group is written out now rather than on the next row, so
	// that at most one is ever buffered.
	if pw.inGroup++; pw.inGroup == pw.perGroup {
		pw.inGroup = 0
		return pw.w.Flush()
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

// appendColumn appends column col of r as parquet values with explicit
// levels. Every value is present, so each leaf sits at its column's maximum
// definition level; reps holds the repetition levels of a list column, which
// mark where each nested list starts.
func appendColumn(dst []parquet.Value, r *Row, col int, reps []byte) []parquet.Value {
	var v parquet.Value
	switch col {
	case colMLPID:
		v = parquet.Int32Value(r.MLPID)
	case colName:
		v = parquet.ByteArrayValue([]byte(r.Name))
	case colSeed:
		v = parquet.Int64Value(r.Seed)
	case colAvgVariance:
		v = parquet.DoubleValue(r.AvgVariance)
	case colBreakdown:
		v = parquet.ByteArrayValue([]byte(r.Breakdown))
	default:
		return appendList(dst, listOf(r, col), reps, col)
	}
	return append(dst, v.Level(0, 1, col))
}

func listOf(r *Row, col int) []float32 {
	switch col {
	case colWeights:
		return r.Weights
	case colLayerMeans:
		return r.LayerMeans
	}
	return r.FinalMeans
}

func appendList(dst []parquet.Value, vals []float32, reps []byte, col int) []parquet.Value {
	def := columns[col].maxDef()
	for k, v := range vals {
		dst = append(dst, parquet.FloatValue(v).Level(int(reps[k]), def, col))
	}
	return dst
}
