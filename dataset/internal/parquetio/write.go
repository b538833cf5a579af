package parquetio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// createdBy is pinned so that equal rows give byte-identical files no matter
// which build wrote them, where parquet-go's default embeds its build hash.
// Change it only together with the writer options below.
const createdBy = "whestbake (parquet-go v0.32.0)"

// rowGroupFloatBytes bounds the float payload of one row group. The writer
// holds a whole row group in memory until it is flushed, and pyarrow cannot
// convert a nested column whose row group decodes into a chunked array, so
// groups stay modest: 64 rows of a small shape, and down to one row when a
// single MLP is larger than the bound: width 1024 × depth 16 is 67 MB.
const maxRowsPerGroup = 64

// rowGroupFloatBytes is a variable only so that tests can reach one-row
// groups, which the writer streams in flushGroup, with shapes small enough
// for parquet-go's own writer to serve as their oracle.
var rowGroupFloatBytes int64 = 64 << 20

func rowsPerGroup(w, d int) int64 {
	rowBytes := 4 * int64(d*w*w+d*w+w)
	return max(1, min(maxRowsPerGroup, rowGroupFloatBytes/rowBytes))
}

// WriterBytes is what a Writer of spec's shape holds beside the rows it is
// given: the encoded floats of a row group, up to 64 MiB, where rows share
// groups. A row of a group of its own goes to the file as it is, and the
// writer holds only the plain levels of one row, a byte per value twice,
// half a row, while it encodes them for its first row.
func WriterBytes(spec bakeapi.Spec) int64 {
	if n := rowsPerGroup(spec.Width, spec.Depth); n > 1 {
		return n * schema.RowBytes(spec)
	}
	return schema.RowBytes(spec) / 2
}

// writerConfig is parquet-go's configuration for files of width w and depth
// d. The float list pages written by listChunk follow from it; change both
// together. The footer's key-value metadata is arrowFooter's.
func writerConfig(w, d int) (*parquet.WriterConfig, error) {
	cfg, err := parquet.NewWriterConfig(
		rowSchema(),
		parquet.MaxRowsPerRowGroup(rowsPerGroup(w, d)),
		// parquet-go would put a page's extreme breakdowns, each a JSON
		// document of about 2 KB, four times into the page header, in the
		// deprecated and the current min/max fields; whestbench's page headers carry no
		// statistics. The chunk statistics in the footer stay.
		parquet.SkipPageStatistics(columns[schema.ColBreakdown].name),
	)
	if err != nil {
		return nil, fmt.Errorf("dataset: parquet writer options: %w", err)
	}
	cfg.CreatedBy = createdBy
	return cfg, nil
}

// Writer streams rows of one shape into a whestbench parquet file.
// At most one row group is held in memory, already encoded.
//
// parquet-go buffers a list column as 24-byte values and copies them twice
// per row, which for a 1024×16 MLP is gigabytes and seconds. So the float
// lists are encoded here by listChunk, page for page as parquet-go would, and
// only the scalar columns go through parquet-go: each row group is written
// by it as a small scratch file with null lists, whose scalar column chunks
// and metadata are spliced into the output next to the list chunks.
type Writer struct {
	width    int
	depth    int
	cfg      *parquet.WriterConfig
	out      io.Writer
	offset   int64 // bytes written to out
	perGroup int64 // rows per row group
	inGroup  int64 // rows in the current row group
	scratch  bytes.Buffer
	scalars  *parquet.GenericWriter[any] // current group's scratch writer
	lists    [numColumns]*listChunk      // nil for scalar columns
	vals     []parquet.Value
	// textBytes counts the current group's string bytes per column:
	// parquet-go records 0 unencoded bytes for dictionary-encoded byte
	// arrays, since it counts the pages' dictionary indexes.
	textBytes [numColumns]int64

	rowGroups     []format.RowGroup
	columnIndexes [][]format.ColumnIndex
	offsetIndexes [][]format.OffsetIndex
	meta          format.FileMetaData // schema, key-values and the like
}

// NewWriter starts a file of rows of spec's width and depth on out; a
// parquet file records nothing else of the spec. Close must be called to
// write the footer; a file without it is unreadable.
func NewWriter(out io.Writer, spec bakeapi.Spec) (*Writer, error) {
	w, d := spec.Width, spec.Depth
	if err := schema.CheckShape(w, d); err != nil {
		return nil, err
	}
	cfg, err := writerConfig(w, d)
	if err != nil {
		return nil, err
	}
	pw := &Writer{
		width:    w,
		depth:    d,
		cfg:      cfg,
		out:      out,
		perGroup: rowsPerGroup(w, d),
	}
	for col, strides := range listStrides(w, d) {
		if strides != nil {
			pw.lists[col] = newListChunk(col, listLen(col, w, d), strides,
				cfg.PageBufferSize, pw.perGroup)
		}
	}
	return pw, nil
}

// Reset starts a new file on out, of the writer's shape, once the last one
// is closed: one Writer writes a split's shards one after another, and
// keeps its buffers, a row group of up to 64 MiB, where a new Writer a shard
// would leave the last one's to the collector while it grows its own.
func (pw *Writer) Reset(out io.Writer) {
	pw.out, pw.offset = out, 0
	pw.inGroup, pw.scalars = 0, nil
	pw.rowGroups, pw.columnIndexes, pw.offsetIndexes = nil, nil, nil
	pw.meta = format.FileMetaData{}
	pw.textBytes = [numColumns]int64{}
	for _, lc := range pw.lists {
		if lc != nil {
			lc.reset()
		}
	}
}

// Write appends rows. Each row's arrays must match the writer's width and depth.
func (pw *Writer) Write(rows ...schema.Row) error {
	for i := range rows {
		if err := rows[i].Check(pw.width, pw.depth); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
		if err := pw.writeRow(&rows[i]); err != nil {
			return fmt.Errorf("dataset: writing parquet row mlp_id=%d: %w", rows[i].MLPID, err)
		}
	}
	return nil
}

func (pw *Writer) writeRow(r *schema.Row) error {
	if pw.scalars == nil {
		pw.scratch.Reset()
		pw.scalars = parquet.NewGenericWriter[any](&pw.scratch, pw.cfg)
	}
	cols := pw.scalars.ColumnWriters()
	for col := range numColumns {
		if lc := pw.lists[col]; lc != nil {
			if pw.perGroup > 1 {
				lc.writeRow(listOf(r, col))
			}
			pw.vals = append(pw.vals[:0], parquet.NullValue().Level(0, 0, col))
		} else {
			pw.vals = append(pw.vals[:0], scalarValue(r, col))
			if v := pw.vals[0]; v.Kind() == parquet.ByteArray {
				pw.textBytes[col] += int64(len(v.ByteArray()))
			}
		}
		if _, err := cols[col].WriteRowValues(pw.vals); err != nil {
			return err
		}
	}
	clear(pw.vals) // drop the byte-array references to the caller's strings
	// A full row group is written out now rather than on the next row, so
	// that at most one is ever buffered.
	if pw.inGroup++; pw.inGroup == pw.perGroup {
		if pw.perGroup == 1 {
			return pw.flushGroup(r)
		}
		return pw.flushGroup(nil)
	}
	return nil
}

// flushGroup writes the current row group: scalar chunks copied from the
// scratch file, list chunks from their encoders, in schema order. A group
// of one row, a large MLP, is passed as row, and its list pages are encoded
// straight from its arrays to the output: each list chunk is then the one
// page holding the row, as writeRow and finish would have cut it, and
// buffering it would hold the row twice, 64 MiB at width 1024 × depth 16.
func (pw *Writer) flushGroup(row *schema.Row) error {
	file, meta, err := pw.closeScratch()
	if err != nil {
		return err
	}
	src := meta.RowGroups[0]
	if pw.offset == 0 {
		if err := pw.emit([]byte("PAR1")); err != nil {
			return err
		}
	}
	rg := format.RowGroup{
		NumRows:        src.NumRows,
		SortingColumns: src.SortingColumns,
		FileOffset:     pw.offset,
		Ordinal:        int16(len(pw.rowGroups)),
	}
	cis := make([]format.ColumnIndex, numColumns)
	ois := make([]format.OffsetIndex, numColumns)
	for col := range numColumns {
		cc := src.Columns[col]
		if lc := pw.lists[col]; lc != nil {
			err = pw.writeListChunk(lc, row, col, &cc, &cis[col], &ois[col])
		} else {
			err = pw.copyScalarChunk(file, col, &cc, &cis[col], &ois[col])
		}
		if err != nil {
			return err
		}
		cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
		cc.OffsetIndexOffset, cc.OffsetIndexLength = 0, 0
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
		rg.Columns = append(rg.Columns, cc)
	}
	pw.textBytes = [numColumns]int64{}
	pw.rowGroups = append(pw.rowGroups, rg)
	pw.columnIndexes = append(pw.columnIndexes, cis)
	pw.offsetIndexes = append(pw.offsetIndexes, ois)
	pw.meta = *meta
	return nil
}

// closeScratch ends the current group's scratch file and returns it with its
// footer, which holds the group as its one row group.
func (pw *Writer) closeScratch() ([]byte, *format.FileMetaData, error) {
	if err := pw.scalars.Close(); err != nil {
		return nil, nil, err
	}
	pw.scalars = nil
	pw.inGroup = 0
	file := pw.scratch.Bytes()
	meta, err := readFooter(file)
	if err != nil {
		return nil, nil, err
	}
	if len(meta.RowGroups) != 1 || len(meta.RowGroups[0].Columns) != numColumns {
		return nil, nil, fmt.Errorf("scratch parquet file has %d row groups, want 1",
			len(meta.RowGroups))
	}
	return file, meta, nil
}

// writeListChunk writes list column col's chunk from lc, and row's page
// when the group is that one row, and fills in cc's metadata and the
// chunk's page indexes, at the output's current offset.
func (pw *Writer) writeListChunk(
	lc *listChunk,
	row *schema.Row,
	col int,
	cc *format.ColumnChunk,
	ci *format.ColumnIndex,
	oi *format.OffsetIndex,
) error {
	start := pw.offset
	if row != nil {
		if err := lc.encodePage(listOf(row, col), 1, pw.emit); err != nil {
			return err
		}
	}
	lc.finish(&cc.MetaData, ci, oi)
	for j := range oi.PageLocations {
		oi.PageLocations[j].Offset += start
	}
	if err := lc.writeTo(pw.emit); err != nil {
		return err
	}
	lc.reset()
	cc.MetaData.DataPageOffset = start
	return nil
}

// copyScalarChunk copies scalar column col's chunk from the scratch file to
// the output's current offset, with its page indexes, and moves cc's
// offsets there.
func (pw *Writer) copyScalarChunk(
	file []byte,
	col int,
	cc *format.ColumnChunk,
	ci *format.ColumnIndex,
	oi *format.OffsetIndex,
) error {
	start := pw.offset
	if err := thriftAt(file, cc.ColumnIndexOffset, cc.ColumnIndexLength, ci); err != nil {
		return err
	}
	if err := thriftAt(file, cc.OffsetIndexOffset, cc.OffsetIndexLength, oi); err != nil {
		return err
	}
	// A scalar chunk starts with its dictionary page; the offset
	// index locates the data pages after it.
	from := cc.MetaData.DictionaryPageOffset
	if from == 0 {
		return fmt.Errorf("scratch parquet column %s has no dictionary page", columns[col].name)
	}
	for j := range oi.PageLocations {
		oi.PageLocations[j].Offset += start - from
	}
	if err := pw.emit(file[from : from+cc.MetaData.TotalCompressedSize]); err != nil {
		return err
	}
	cc.MetaData.DictionaryPageOffset = start
	cc.MetaData.DataPageOffset += start - from
	if columns[col].kind == parquet.ByteArray {
		cc.MetaData.SizeStatistics.UnencodedByteArrayDataBytes = pw.textBytes[col]
	}
	return nil
}

// Close flushes the last row group and writes the page indexes and footer
// as parquet-go lays them out.
func (pw *Writer) Close() error {
	if err := pw.close(); err != nil {
		return fmt.Errorf("dataset: finishing parquet file: %w", err)
	}
	return nil
}

func (pw *Writer) close() error {
	if pw.inGroup > 0 { // only groups of several rows are left open
		if err := pw.flushGroup(nil); err != nil {
			return err
		}
	}
	if len(pw.rowGroups) == 0 {
		// No rows: the footer is that of parquet-go's own empty file.
		pw.scratch.Reset()
		if err := parquet.NewGenericWriter[any](&pw.scratch, pw.cfg).Close(); err != nil {
			return err
		}
		meta, err := readFooter(pw.scratch.Bytes())
		if err != nil {
			return err
		}
		pw.meta = *meta
		if err := pw.emit([]byte("PAR1")); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	enc := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&buf))
	put := func(v any) (offset int64, length int32, err error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return 0, 0, err
		}
		offset = pw.offset
		return offset, int32(buf.Len()), pw.emit(buf.Bytes())
	}
	var err error
	for i, cis := range pw.columnIndexes {
		for j := range cis {
			c := &pw.rowGroups[i].Columns[j]
			if c.ColumnIndexOffset, c.ColumnIndexLength, err = put(&cis[j]); err != nil {
				return err
			}
		}
	}
	for i, ois := range pw.offsetIndexes {
		for j := range ois {
			c := &pw.rowGroups[i].Columns[j]
			if c.OffsetIndexOffset, c.OffsetIndexLength, err = put(&ois[j]); err != nil {
				return err
			}
		}
	}
	meta := format.FileMetaData{
		Version:          pw.meta.Version,
		Schema:           pw.meta.Schema,
		RowGroups:        pw.rowGroups,
		KeyValueMetadata: pw.meta.KeyValueMetadata,
		CreatedBy:        pw.meta.CreatedBy,
		ColumnOrders:     pw.meta.ColumnOrders,
	}
	for _, rg := range pw.rowGroups {
		meta.NumRows += rg.NumRows
	}
	arrowFooter(&meta, pw.width, pw.depth)
	_, n, err := put(&meta)
	if err != nil {
		return err
	}
	tail := binary.LittleEndian.AppendUint32(nil, uint32(n))
	return pw.emit(append(tail, "PAR1"...))
}

func (pw *Writer) emit(b []byte) error {
	n, err := pw.out.Write(b)
	pw.offset += int64(n)
	return err
}

// readFooter decodes the footer of a whole parquet file held in memory.
func readFooter(file []byte) (*format.FileMetaData, error) {
	if len(file) < 12 {
		return nil, fmt.Errorf("scratch parquet file too short (%d bytes)", len(file))
	}
	n := int64(binary.LittleEndian.Uint32(file[len(file)-8:]))
	meta := new(format.FileMetaData)
	end := int64(len(file) - 8)
	if err := thriftAt(file, end-n, int32(n), meta); err != nil {
		return nil, err
	}
	return meta, nil
}

// cdcKey is what datasets 4.x records after asking pyarrow for
// content-defined chunking with its default options. No reader acts on it;
// it is written so that footers carry the same entries as whestbench's.
// whestbake's page boundaries are not content-defined.
const (
	cdcKey   = "content_defined_chunking"
	cdcValue = `{"min_chunk_size": 262144, "max_chunk_size": 1048576, "norm_level": 0}`
)

// keyValueMetadata is the footer's key-value metadata for width w and
// depth d, in the order whestbench's files have it.
func keyValueMetadata(w, d int) [][2]string {
	return [][2]string{
		{cdcKey, cdcValue},
		{schema.HFMetadataKey, schema.FeaturesJSON(w, d)},
		{schema.ArrowSchemaKey, schema.ArrowSchema(w, d)},
	}
}

// arrowFooter makes a footer written by parquet-go carry what Arrow's, and
// so whestbench's, carries where readers look: Arrow's key-value metadata,
// a REQUIRED root, no type_length on fixed-width leaves, no INT(32|64,
// signed) annotation on mlp_id and mlp_seed, and the deprecated min/max
// statistics next to min_value/max_value for the columns whose order is
// signed, for readers that only know the deprecated fields. parquet-go
// records a fixed-width leaf's bit width, which the format defines only for
// FIXED_LEN_BYTE_ARRAY; Arrow leaves plain integers unannotated. Arrow
// writes the deprecated fields for all columns but byte arrays, whose
// deprecated min/max had an ill-defined order. Columns without repetition
// get the empty repetition-level histogram that Arrow writes, where
// parquet-go omits it; both mean the same. Float bounds follow the format's
// rule for zeros, which parquet-go does not apply: a zero minimum is
// written as -0.0, a zero maximum as +0.0, so that a reader comparing
// either zero against them skips nothing.
func arrowFooter(meta *format.FileMetaData, w, d int) {
	meta.Schema[0].RepetitionType = thrift.New(format.Required)
	for i := range meta.Schema {
		e := &meta.Schema[i]
		if !e.Type.Valid {
			continue
		}
		e.TypeLength = thrift.Null[int32]{}
		if e.Type.V == format.Int32 || e.Type.V == format.Int64 {
			e.LogicalType = format.LogicalType{}
		}
	}
	meta.KeyValueMetadata = meta.KeyValueMetadata[:0]
	for _, kv := range keyValueMetadata(w, d) {
		meta.KeyValueMetadata = append(meta.KeyValueMetadata,
			format.KeyValue{Key: kv[0], Value: kv[1]})
	}
	for i := range meta.RowGroups {
		for j := range meta.RowGroups[i].Columns {
			md := &meta.RowGroups[i].Columns[j].MetaData
			st := &md.Statistics
			if md.Type == format.Float || md.Type == format.Double {
				st.MinValue = signedZero(st.MinValue, true)
				st.MaxValue = signedZero(st.MaxValue, false)
			}
			if md.Type != format.ByteArray {
				st.Min, st.Max = st.MinValue, st.MaxValue
			}
			if md.SizeStatistics.RepetitionLevelHistogram == nil {
				md.SizeStatistics.RepetitionLevelHistogram = []int64{}
			}
		}
	}
}

// signedZero returns the little-endian float bound b, or if b is a zero
// of either sign, the zero of sign neg.
func signedZero(b []byte, neg bool) []byte {
	n := len(b)
	// A zero has every bit clear but the sign, the top bit of the last byte.
	if n == 0 || b[n-1]&0x7f != 0 || bytes.Count(b[:n-1], []byte{0}) != n-1 {
		return b
	}
	out := make([]byte, n)
	if neg {
		out[n-1] = 0x80
	}
	return out
}

func thriftAt(file []byte, offset int64, length int32, v any) error {
	if offset < 0 || length < 0 || offset+int64(length) > int64(len(file)) {
		return fmt.Errorf("scratch parquet structure [%d,+%d) outside the file", offset, length)
	}
	return thrift.Unmarshal(new(thrift.CompactProtocol), file[offset:offset+int64(length)], v)
}

// Write writes rows as one whestbench parquet file. Equal width,
// depth and rows give byte-identical output.
func Write(w io.Writer, spec bakeapi.Spec, rows []schema.Row) error {
	pw, err := NewWriter(w, spec)
	if err != nil {
		return err
	}
	if err := pw.Write(rows...); err != nil {
		return err
	}
	return pw.Close()
}

// scalarValue is scalar column col of r as a parquet value. Every value is
// present, so it sits at the column's maximum definition level.
func scalarValue(r *schema.Row, col int) parquet.Value {
	var v parquet.Value
	switch p := schema.Columns[col].Of(r).(type) {
	case *int32:
		v = parquet.Int32Value(*p)
	case *int64:
		v = parquet.Int64Value(*p)
	case *float64:
		v = parquet.DoubleValue(*p)
	case *string:
		v = parquet.ByteArrayValue([]byte(*p))
	}
	return v.Level(0, 1, col)
}

func listOf(r *schema.Row, col int) []float32 { return schema.Columns[col].Floats(r) }
