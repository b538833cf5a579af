package parquetio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// Reader streams the rows of one whestbench parquet file, checking
// each against the shape the file declares. Any problem is an
// *schema.InvalidDatasetError naming the file.
type Reader struct {
	path        string
	file        *os.File
	parquetFile *parquet.File
	width       int
	depth       int
	group       int             // next row group to open
	cols        []*columnCursor // current row group's columns, nil between groups
	// plain marks the float-list chunks of each row group that hold only
	// uncompressed PLAIN v2 pages, as checkPages finds, which lists reads without
	// parquet-go; cols has nil there.
	plain   [][numColumns]bool
	lists   [numColumns]*plainListCursor
	left    int64             // rows of the current group not yet read
	strides [numColumns][]int // each list column's nesting, as fillReps lays it out
	nRead   int64
	closed  bool
}

// Open opens path and checks its footer, its column layout and its
// huggingface features. Rows are read by Next.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, schema.Errorf("cannot open parquet file %s: %v", path, err)
	}
	r := &Reader{path: path, file: f}
	if err := r.open(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) open() error {
	st, err := r.file.Stat()
	if err != nil {
		return schema.Errorf("cannot stat parquet file %s: %v", r.path, err)
	}
	if err := checkFooter(r.file, st.Size()); err != nil {
		return r.corrupt(err)
	}
	// The page index serves seeks; rows are read in order.
	err = parquetCall(func() (err error) {
		r.parquetFile, err = parquet.OpenFile(r.file, st.Size(), parquet.SkipPageIndex(true))
		return err
	})
	if err != nil {
		return r.corrupt(err)
	}
	// Some node types of a damaged schema panic when asked their kind.
	schemaErr := parquetCall(func() error { return checkColumns(r.parquetFile.Schema()) })
	if schemaErr != nil {
		return schema.Errorf("parquet file %s does not have the whestbench schema-3.0 columns: %v."+
			" Re-bake it with whestbake.", r.path, schemaErr)
	}
	text, ok := r.parquetFile.Lookup(schema.HFMetadataKey)
	if !ok {
		return schema.Errorf("parquet file %s has no %q key-value metadata, "+
			"so its array shape is unknown."+adviceRebake, r.path, schema.HFMetadataKey)
	}
	if r.width, r.depth, err = schema.ShapeFromFeatures(text); err != nil {
		return schema.Errorf("parquet file %s: %q key-value metadata %v."+adviceRebake,
			r.path, schema.HFMetadataKey, err)
	}
	r.strides = listStrides(r.width, r.depth)
	r.plain, err = checkPages(r.file, st.Size(), r.parquetFile.Metadata(), r.width, r.depth)
	if err != nil {
		return r.corrupt(err)
	}
	if err := schema.CheckTypeMetadata(r.parquetFile.Lookup, r.width, r.depth); err != nil {
		return schema.Errorf("parquet file %s: %v."+adviceRebake, r.path, err)
	}
	// Without rows the declared shape is never used and may be anything,
	// as next builds nothing from it then; with rows, checkPages has tied it
	// to the values present.
	return nil
}

func (r *Reader) corrupt(err error) error {
	return schema.Errorf("parquet file %s is corrupt or truncated: %v."+adviceRedownload,
		r.path, err)
}

// The advice that ends a reader's errors: for a file that does not hold a
// whestbench dataset's shard, and for one damaged since it was written.
const (
	adviceRebake     = " Re-bake it with whestbake or whestbench."
	adviceRedownload = " Re-bake or re-download it."
)

// checkColumns compares the file's leaf columns with the Arrow layout of
// whestbench's fixture files in testdata/whestbench-fixtures, from
// https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures: names,
// order, physical types and nesting.
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
			return fmt.Errorf("column %s is at position %d, expected %d",
				c.name, leaf.ColumnIndex, i)
		case leaf.Node.Type().Kind() != c.kind:
			return fmt.Errorf("column %s has type %v, expected %v",
				c.name, leaf.Node.Type().Kind(), c.kind)
		case leaf.MaxRepetitionLevel != c.listDepth || leaf.MaxDefinitionLevel != c.maxDef():
			return fmt.Errorf("column %s has repetition/definition levels %d/%d, "+
				"expected %d/%d (optional 3-level lists)",
				c.name, leaf.MaxRepetitionLevel, leaf.MaxDefinitionLevel, c.listDepth, c.maxDef())
		}
	}
	return nil
}

// Width is the MLP width declared by the file's huggingface features.
func (r *Reader) Width() int { return r.width }

// Depth is the MLP depth declared by the file's huggingface features.
func (r *Reader) Depth() int { return r.depth }

// NumRows is the row count recorded in the footer.
func (r *Reader) NumRows() int64 { return r.parquetFile.NumRows() }

// Next returns the next row as stored, or io.EOF after the last one. It
// checks the encoding, not the values: a NaN comes back bit for bit, and
// the dataset readers refuse it through Scan.
func (r *Reader) Next() (schema.Row, error) {
	var row schema.Row
	err := r.next(&row)
	return row, err
}

// next reads the next row into row, reusing its arrays when they are large
// enough: a stream of rows then allocates no row after the first, which
// keeps the collector from letting the heap grow to twice what is live on
// their garbage: a row of width 1024 × depth 16 is 64 MiB.
func (r *Reader) next(row *schema.Row) error {
	for r.left == 0 {
		if r.cols != nil {
			if err := r.endGroup(); err != nil {
				return err
			}
		}
		if r.group == len(r.parquetFile.RowGroups()) {
			if r.nRead != r.parquetFile.NumRows() {
				return r.corrupt(fmt.Errorf("footer records %d rows but the row groups hold %d",
					r.parquetFile.NumRows(), r.nRead))
			}
			return io.EOF
		}
		rg := r.parquetFile.RowGroups()[r.group]
		meta := &r.parquetFile.Metadata().RowGroups[r.group]
		plain := r.plain[r.group]
		r.group++
		cols := make([]*columnCursor, numColumns)
		err := parquetCall(func() error {
			for i, cc := range rg.ColumnChunks() {
				if plain[i] {
					m := &meta.Columns[i].MetaData
					r.lists[i] = newPlainListCursor(columns[i], r.file,
						m.DataPageOffset, m.TotalCompressedSize)
					continue
				}
				cols[i] = newColumnCursor(columns[i], cc.Pages())
			}
			return nil
		})
		if err != nil {
			return r.corrupt(err)
		}
		r.left = rg.NumRows()
		r.cols = cols
	}
	if err := r.readRow(row); err != nil {
		return schema.Errorf("parquet file %s, row %d: %v."+adviceRedownload,
			r.path, r.nRead, err)
	}
	r.left--
	r.nRead++
	return nil
}

// endGroup checks that the finished row group holds no values beyond its
// rows and releases its pages.
func (r *Reader) endGroup() error {
	defer r.closeGroup()
	for col := range numColumns {
		var err error
		if c := r.lists[col]; c != nil {
			err = c.finish()
		} else {
			err = r.cols[col].finish()
		}
		if err != nil {
			return schema.Errorf("parquet file %s, row group %d: %v."+adviceRedownload,
				r.path, r.group-1, err)
		}
	}
	return nil
}

// closeGroup releases the row group's pages.
func (r *Reader) closeGroup() {
	for _, c := range r.cols {
		if c != nil {
			c.close()
		}
	}
	r.cols = nil
	r.lists = [numColumns]*plainListCursor{}
}

// readRow decodes one row, insisting on exactly the nesting the writer
// produces: no nulls anywhere and every list of the declared length. A file
// with other levels is not a whestbench dataset.
func (r *Reader) readRow(row *schema.Row) error {
	for col, c := range r.cols {
		if columns[col].listDepth > 0 {
			values := schema.Columns[col].Of(row).(*[]float32)
			*values = resize(*values, listLen(col, r.width, r.depth))
			var err error
			if pc := r.lists[col]; pc != nil {
				err = pc.readList(*values, r.strides[col])
			} else {
				err = c.readList(*values, r.strides[col])
			}
			if err != nil {
				return fmt.Errorf("row mlp_id=%d: %v", row.MLPID, err)
			}
			continue
		}
		v, err := c.readScalar()
		if err != nil {
			return err
		}
		switch p := schema.Columns[col].Of(row).(type) {
		case *int32:
			*p = v.Int32()
		case *int64:
			*p = v.Int64()
		case *float64:
			*p = v.Double()
		case *string:
			*p = string(v.ByteArray())
		}
	}
	return nil
}

// resize is buf with length n, reallocated only when too small.
func resize(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// Close releases the file. It is safe to call more than once.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.cols != nil {
		r.closeGroup()
	}
	return r.file.Close()
}

// Read reads a whole whestbench parquet file. Width and depth come
// from the file's huggingface features and every row is checked against them.
func Read(path string) (width, depth int, rows []schema.Row, err error) {
	width, depth, err = Scan(path, new(schema.Row), func(r schema.Row) error {
		rows = append(rows, r.Clone())
		return nil
	})
	if err != nil {
		return 0, 0, nil, err
	}
	return width, depth, rows, nil
}

// Scan calls visit for each row of path in order and returns the file's
// width and depth. Only one decoded row is held at a time, in row: its
// arrays are reused for the next row once visit returns, so visit copies
// what it keeps with schema.Row.Clone. A caller scanning several files passes
// the same row to each, so that they share one row's arrays.
//
// It is how every reader of a dataset gets its rows, as dataset's Dir.Scan,
// merge and Read do, so it refuses a row whose numbers no bake produces, by
// schema.Row.CheckValues. The codec below it, Reader, returns what is
// stored, NaN bits included.
func Scan(
	path string,
	row *schema.Row,
	visit func(schema.Row) error,
) (width, depth int, err error) {
	r, err := Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	for {
		err := r.next(row)
		if errors.Is(err, io.EOF) {
			return r.Width(), r.Depth(), nil
		}
		if err != nil {
			return 0, 0, err
		}
		if err := row.CheckValues(); err != nil {
			return 0, 0, schema.Errorf("parquet file %s, row %d: %v."+adviceRedownload,
				path, r.nRead-1, err)
		}
		if err := visit(*row); err != nil {
			return 0, 0, err
		}
	}
}
