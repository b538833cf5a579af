package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// ParquetReader streams the rows of one whestbench parquet file, checking
// each against the shape the file declares. Any problem is an
// *InvalidDatasetError naming the file.
type ParquetReader struct {
	path   string
	file   *os.File
	pf     *parquet.File
	shape  Shape
	group  int           // next row group to open
	rows   parquet.Rows  // current row group's rows, nil between groups
	buf    []parquet.Row // one row at a time: a large MLP is millions of values
	nRead  int64
	closed bool
}

// OpenParquet opens path and checks its footer, its column layout and its
// huggingface features. Rows are read by Next.
func OpenParquet(path string) (*ParquetReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, invalidf("cannot open parquet file %s: %v", path, err)
	}
	r := &ParquetReader{path: path, file: f, buf: make([]parquet.Row, 1)}
	if err := r.open(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *ParquetReader) open() error {
	st, err := r.file.Stat()
	if err != nil {
		return invalidf("cannot stat parquet file %s: %v", r.path, err)
	}
	r.pf, err = parquet.OpenFile(r.file, st.Size())
	if err != nil {
		return r.corrupt(err)
	}
	if err := checkColumns(r.pf.Schema()); err != nil {
		return invalidf("parquet file %s does not have the whestbench schema-3.0 columns: %v. Re-bake it with whestbake.", r.path, err)
	}
	text, ok := r.pf.Lookup(hfMetadataKey)
	if !ok {
		return invalidf("parquet file %s has no %q key-value metadata, so its array shape is unknown. Re-bake it with whestbake or whestbench.", r.path, hfMetadataKey)
	}
	if r.shape, err = shapeFromFeatures(text); err != nil {
		return invalidf("parquet file %s: %q key-value metadata %v. Re-bake it with whestbake or whestbench.", r.path, hfMetadataKey, err)
	}
	return nil
}

func (r *ParquetReader) corrupt(err error) error {
	return invalidf("parquet file %s is corrupt or truncated: %v. Re-bake or re-download it.", r.path, err)
}

// checkColumns compares the file's leaf columns with the Arrow layout of
// reference §8.1: names, order, physical types and nesting.
func checkColumns(s *parquet.Schema) error {
	if n := len(s.Columns()); n != numColumns {
		return fmt.Errorf("it has %d leaf columns, expected %d", n, numColumns)
	}
	for i, c := range columns {
		leaf, ok := s.Lookup(c.leafPath()...)
		switch {
		case !ok:
			return fmt.Errorf("column %s (leaf %v) is missing", c.name, c.leafPath())
		case leaf.ColumnIndex != i:
			return fmt.Errorf("column %s is at position %d, expected %d", c.name, leaf.ColumnIndex, i)
		case leaf.Node.Type().Kind() != c.kind:
			return fmt.Errorf("column %s has type %v, expected %v", c.name, leaf.Node.Type().Kind(), c.kind)
		case leaf.MaxRepetitionLevel != c.listDepth || leaf.MaxDefinitionLevel != c.maxDef():
			return fmt.Errorf("column %s has repetition/definition levels %d/%d, expected %d/%d (optional 3-level lists)",
				c.name, leaf.MaxRepetitionLevel, leaf.MaxDefinitionLevel, c.listDepth, c.maxDef())
		}
	}
	return nil
}

// Shape is the (width, depth) declared by the file's huggingface features.
func (r *ParquetReader) Shape() Shape { return r.shape }

// NumRows is the row count recorded in the footer.
func (r *ParquetReader) NumRows() int64 { return r.pf.NumRows() }

// Next returns the next row, or io.EOF after the last one.
func (r *ParquetReader) Next() (Row, error) {
	for {
		if r.rows == nil {
			if r.group == len(r.pf.RowGroups()) {
				if r.nRead != r.pf.NumRows() {
					return Row{}, r.corrupt(fmt.Errorf("footer records %d rows but the row groups hold %d", r.pf.NumRows(), r.nRead))
				}
				return Row{}, io.EOF
			}
			r.rows = r.pf.RowGroups()[r.group].Rows()
			r.group++
		}
		n, err := r.rows.ReadRows(r.buf)
		if n == 1 {
			row, derr := decodeRow(r.buf[0], r.shape)
			if derr != nil {
				return Row{}, invalidf("parquet file %s, row %d: %v. Re-bake or re-download it.", r.path, r.nRead, derr)
			}
			r.nRead++
			return row, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Row{}, r.corrupt(err)
		}
		if err := r.rows.Close(); err != nil {
			return Row{}, r.corrupt(err)
		}
		r.rows = nil
	}
}

// Close releases the file. It is safe to call more than once.
func (r *ParquetReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.rows != nil {
		r.rows.Close()
	}
	return r.file.Close()
}

// ReadParquet reads a whole whestbench parquet file. The shape comes from
// the file's huggingface features and every row is checked against it.
func ReadParquet(path string) (Shape, []Row, error) {
	var rows []Row
	shape, err := scanParquet(path, func(r Row) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return Shape{}, nil, err
	}
	return shape, rows, nil
}

// scanParquet calls visit for each row of path in order and returns the
// file's shape. Only one decoded row is held at a time.
func scanParquet(path string, visit func(Row) error) (Shape, error) {
	r, err := OpenParquet(path)
	if err != nil {
		return Shape{}, err
	}
	defer r.Close()
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Shape(), nil
		}
		if err != nil {
			return Shape{}, err
		}
		if err := visit(row); err != nil {
			return Shape{}, err
		}
	}
}

// decodeRow turns one parquet row back into a Row, insisting on exactly the
// nesting appendRow writes: no nulls anywhere and every list of the declared
// length. A file with other levels is not a whestbench dataset.
func decodeRow(vals parquet.Row, s Shape) (Row, error) {
	var r Row
	w, d := s.Width, s.Depth
	i := 0
	next := func(col int) []parquet.Value {
		start := i
		for i < len(vals) && vals[i].Column() == col {
			i++
		}
		return vals[start:i]
	}
	for col, c := range columns {
		vs := next(col)
		if c.listDepth == 0 {
			if len(vs) != 1 || vs[0].IsNull() || vs[0].DefinitionLevel() != 1 {
				return r, fmt.Errorf("column %s is null or missing", c.name)
			}
		}
		var err error
		switch col {
		case colMLPID:
			r.MLPID = vs[0].Int32()
		case colName:
			r.Name = string(vs[0].ByteArray())
		case colSeed:
			r.Seed = vs[0].Int64()
		case colWeights:
			r.Weights, err = decodeList(vs, []int{w * w, w, 1}, d*w*w, c)
		case colLayerMeans:
			r.LayerMeans, err = decodeList(vs, []int{w, 1}, d*w, c)
		case colFinalMeans:
			r.FinalMeans, err = decodeList(vs, []int{1}, w, c)
		case colAvgVariance:
			r.AvgVariance = vs[0].Double()
		case colBreakdown:
			r.Breakdown = string(vs[0].ByteArray())
		}
		if err != nil {
			return r, fmt.Errorf("row mlp_id=%d: %v", r.MLPID, err)
		}
	}
	if i != len(vals) {
		return r, fmt.Errorf("row has %d values beyond the 8 columns", len(vals)-i)
	}
	return r, nil
}

// decodeList is the inverse of appendList; see there for the levels.
func decodeList(vs []parquet.Value, strides []int, n int, c columnSpec) ([]float32, error) {
	if len(vs) != n {
		return nil, fmt.Errorf("column %s has %d values, the declared shape needs %d", c.name, len(vs), n)
	}
	out := make([]float32, n)
	def := c.maxDef()
	for k, v := range vs {
		want := listRepLevel(k, strides)
		if v.DefinitionLevel() != def || v.RepetitionLevel() != want {
			return nil, fmt.Errorf("column %s value %d has levels rep=%d def=%d, expected rep=%d def=%d (a null or a list of the wrong length)",
				c.name, k, v.RepetitionLevel(), v.DefinitionLevel(), want, def)
		}
		out[k] = v.Float()
	}
	return out, nil
}
