package parquetio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquet-go v0.32.0 trusts the sizes and counts it decodes: a flipped
// bit in a footer list length, a page header's page size or a level length
// makes it allocate up to gigabytes, recurse without bound or slice out of
// range, before any checksum is looked at. The checks here run on the raw
// bytes first, so a damaged file costs no more memory than a small multiple
// of its size and ends in an error naming what is wrong; parquetCall turns
// the panics that remain, such as one for a negative num_children in the
// schema, into errors. What is left: counts the file states consistently in
// several places, as a footer, page headers and features text that all
// claim a huge shape, and pages compressed with codecs other than snappy,
// which neither writer of these datasets uses.

// parquetCall runs f, which calls into parquet-go, and reports a panic in
// it as an error. Recovery is safe here: the reader is abandoned after any
// error, so no half-updated parquet-go state is used again.
func parquetCall(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet-go failed on it: %v", p)
		}
	}()
	return f()
}

const (
	parquetMagic = "PAR1"
	// maxThriftNesting is far above the depth of parquet's own structures:
	// a footer nests about six deep. Anything deeper is damage.
	maxThriftNesting = 64
	// firstHeaderWindow is read for a page header before knowing its size;
	// headers are tens of bytes plus statistics, and a longer one is read
	// again with a doubled window.
	firstHeaderWindow = 4 << 10
)

// checkFooter validates the file's framing and that its footer is one
// well-formed thrift struct whose lengths fit in it.
func checkFooter(f io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("it is %d bytes, shorter than parquet's magic numbers and footer length",
			size)
	}
	var head, tail [8]byte
	if _, err := f.ReadAt(head[:4], 0); err != nil {
		return err
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(head[:4]) != parquetMagic || string(tail[4:]) != parquetMagic {
		return fmt.Errorf("it does not begin and end with %q", parquetMagic)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n == 0 || n > size-12 {
		return fmt.Errorf("its footer length %d does not fit in the file", n)
	}
	footer := make([]byte, n)
	if _, err := f.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	got, err := thriftStructLen(footer)
	switch {
	case err != nil:
		return fmt.Errorf("footer: %v", err)
	case got != len(footer):
		return fmt.Errorf("footer: %d bytes after its end", len(footer)-got)
	}
	return nil
}

// checkPages walks every page header of every column chunk. Each chunk
// must lie inside the file and each page inside its chunk; a page may not
// claim to inflate beyond what its codec can produce; and the values of a
// chunk's data pages must add up to what the footer records, which must be
// what the declared shape needs for the row group's rows. schema.Row buffers are
// sized from the shape, so this ties them to counts the file states three
// times over, in features text, footer and page headers. It also reports, per
// row group, which float-list chunks hold only uncompressed PLAIN v2 data
// pages, which plainListCursor reads.
func checkPages(
	f io.ReaderAt,
	size int64,
	meta *format.FileMetaData,
	width, depth int,
) (plain [][numColumns]bool, err error) {
	var total int64
	plain = make([][numColumns]bool, len(meta.RowGroups))
	for g := range meta.RowGroups {
		rg := &meta.RowGroups[g]
		if len(rg.Columns) != numColumns {
			return nil, fmt.Errorf("row group %d has %d column chunks, expected %d",
				g, len(rg.Columns), numColumns)
		}
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("row group %d has %d rows", g, rg.NumRows)
		}
		total += rg.NumRows
		for col := range rg.Columns {
			m := &rg.Columns[col].MetaData
			perRow := int64(1)
			if columns[col].listDepth > 0 {
				perRow = int64(listLen(col, width, depth))
			}
			hi, want := bits.Mul64(uint64(rg.NumRows), uint64(perRow))
			if hi != 0 || want != uint64(m.NumValues) {
				return nil, fmt.Errorf("row group %d column %s holds %d values, "+
					"but %d rows of width %d, depth %d need %d each",
					g, columns[col].name, m.NumValues, rg.NumRows, width, depth, perRow)
			}
			if plain[g][col], err = checkChunkPages(f, size, m, columns[col]); err != nil {
				return nil, fmt.Errorf("row group %d column %s: %v", g, columns[col].name, err)
			}
		}
	}
	if total != meta.NumRows {
		return nil, fmt.Errorf("the footer records %d rows but its row groups hold %d",
			meta.NumRows, total)
	}
	return plain, nil
}

// checkChunkPages checks one column chunk's pages and reports whether it is
// a float list of uncompressed PLAIN v2 data pages alone.
func checkChunkPages(
	f io.ReaderAt,
	size int64,
	m *format.ColumnMetaData,
	spec columnSpec,
) (plain bool, err error) {
	// Without a dictionary offset the pages walked here are the ones
	// plainListCursor reads, from DataPageOffset.
	plain = spec.listDepth > 0 &&
		spec.kind == parquet.Float &&
		m.Type == format.Float &&
		m.Codec == format.Uncompressed &&
		m.DictionaryPageOffset == 0
	start := m.DataPageOffset
	if m.DictionaryPageOffset != 0 { // where parquet-go starts reading
		start = m.DictionaryPageOffset
	}
	if start < int64(len(parquetMagic)) ||
		start > size ||
		m.TotalCompressedSize < 0 ||
		m.TotalCompressedSize > size-start {
		return false, fmt.Errorf("its pages at [%d, +%d) are not inside the %d-byte file",
			start, m.TotalCompressedSize, size)
	}
	end := start + m.TotalCompressedSize
	var values int64
	for off := start; off < end; {
		h, n, err := readPageHeader(f, off, end)
		if err != nil {
			return false, fmt.Errorf("page header at offset %d: %v", off, err)
		}
		off += int64(n)
		p := pageBody{
			file:     f,
			off:      off,
			size:     int64(h.CompressedPageSize),
			inflated: int64(h.UncompressedPageSize),
			codec:    m.Codec,
		}
		if p.size < 0 || p.size > end-off {
			return false, fmt.Errorf("page at offset %d claims %d bytes, "+
				"%d are left in the column chunk", off, p.size, end-off)
		}
		if p.inflated < 0 || p.inflated > maxInflated(m.Codec, p.size) {
			return false, fmt.Errorf("page at offset %d claims to inflate from %d to %d bytes "+
				"with %v", off, p.size, p.inflated, m.Codec)
		}
		// parquet-go reads the header its type names, a zero value when absent.
		switch {
		case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
			err = p.checkV2(&h.DataPageHeaderV2.V, spec)
			values += int64(h.DataPageHeaderV2.V.NumValues)
			plain = plain && h.DataPageHeaderV2.V.Encoding == format.Plain
		case h.Type == format.DataPage && h.DataPageHeader.Valid:
			err = p.checkV1(&h.DataPageHeader.V, spec)
			values += int64(h.DataPageHeader.V.NumValues)
			plain = false
		case h.Type == format.DictionaryPage && h.DictionaryPageHeader.Valid:
			err = p.checkDictionary(&h.DictionaryPageHeader.V)
			plain = false
		default:
			err = fmt.Errorf("is a %v page without that type's header, "+
				"or not a data or dictionary page", h.Type)
		}
		if err != nil {
			return false, fmt.Errorf("page at offset %d: %v", off, err)
		}
		off += p.size
	}
	if values != m.NumValues {
		return false, fmt.Errorf("its data pages hold %d values, the footer records %d",
			values, m.NumValues)
	}
	return plain, nil
}

// pageBody is one page of a column chunk: size bytes at off in file, which
// decode to inflated bytes.
type pageBody struct {
	file      io.ReaderAt
	off, size int64
	inflated  int64
	codec     format.CompressionCodec
}

// checkV2 checks a v2 data page. Its levels come first and are never
// compressed.
func (p pageBody) checkV2(v *format.DataPageHeaderV2, spec columnSpec) error {
	if v.NumValues < 0 ||
		v.NumNulls < 0 ||
		v.NumNulls > v.NumValues ||
		v.NumRows < 0 ||
		v.NumRows > v.NumValues {
		return fmt.Errorf("claims %d values, %d of them null, in %d rows",
			v.NumValues, v.NumNulls, v.NumRows)
	}
	levels := int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
	if v.RepetitionLevelsByteLength < 0 ||
		v.DefinitionLevelsByteLength < 0 ||
		levels > min(p.size, p.inflated) {
		return fmt.Errorf("has %d+%d bytes of levels in %d bytes",
			v.RepetitionLevelsByteLength, v.DefinitionLevelsByteLength, min(p.size, p.inflated))
	}
	b := make([]byte, levels)
	if _, err := p.file.ReadAt(b, p.off); err != nil {
		return err
	}
	repetition := b[:v.RepetitionLevelsByteLength]
	definition := b[v.RepetitionLevelsByteLength:]
	if err := checkLevels(repetition, spec.listDepth, v.NumValues); err != nil {
		return fmt.Errorf("repetition %v", err)
	}
	if err := checkLevels(definition, spec.maxDef(), v.NumValues); err != nil {
		return fmt.Errorf("definition %v", err)
	}
	if p.codec == format.Snappy && (!v.IsCompressed.Valid || v.IsCompressed.V) {
		return checkSnappyLen(p.file, p.off+levels, p.size-levels, p.inflated-levels)
	}
	return nil
}

// checkV1 checks a v1 data page, whose levels sit inside the compressed
// body: a snappy page is decompressed here to check them.
func (p pageBody) checkV1(v *format.DataPageHeader, spec columnSpec) error {
	if v.NumValues < 0 {
		return fmt.Errorf("claims %d values", v.NumValues)
	}
	switch p.codec {
	case format.Uncompressed:
		return checkLevelsV1(p.file, p.off, p.size, spec, v)
	case format.Snappy:
		if err := checkSnappyLen(p.file, p.off, p.size, p.inflated); err != nil {
			return err
		}
		compressed := make([]byte, p.size)
		if _, err := p.file.ReadAt(compressed, p.off); err != nil {
			return err
		}
		body, err := new(snappy.Codec).Decode(make([]byte, 0, p.inflated), compressed)
		if err != nil {
			return err
		}
		return checkLevelsV1(bytes.NewReader(body), 0, int64(len(body)), spec, v)
	}
	return nil
}

func (p pageBody) checkDictionary(v *format.DictionaryPageHeader) error {
	// Every PLAIN dictionary entry of these columns takes a byte or more.
	if n := int64(v.NumValues); n < 0 || n > p.inflated {
		return fmt.Errorf("dictionary claims %d values in %d bytes", n, p.inflated)
	}
	if p.codec == format.Snappy {
		return checkSnappyLen(p.file, p.off, p.size, p.inflated)
	}
	return nil
}

// checkSnappyLen checks the decoded length a snappy block states in its
// first bytes, which the decoder allocates before decoding anything.
func checkSnappyLen(f io.ReaderAt, off, size, want int64) error {
	var head [binary.MaxVarintLen64]byte
	b := head[:min(size, int64(len(head)))]
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	n, k := binary.Uvarint(b)
	switch {
	case k <= 0:
		return fmt.Errorf("snappy block has no valid length")
	case n > uint64(max(want, 0)):
		return fmt.Errorf("snappy block decodes to %d bytes, the page header says %d", n, want)
	}
	return nil
}

// checkLevelsV1 checks the levels at the start of an uncompressed v1 data
// page: each level kind present is a 4-byte length and that many bytes.
func checkLevelsV1(
	f io.ReaderAt,
	off, size int64,
	spec columnSpec,
	v *format.DataPageHeader,
) error {
	for _, l := range [...]struct {
		kind     string
		max      int
		encoding format.Encoding
	}{
		{"repetition", spec.listDepth, v.RepetitionLevelEncoding},
		{"definition", spec.maxDef(), v.DefinitionLevelEncoding},
	} {
		if l.max == 0 {
			continue
		}
		var prefix [4]byte
		if size < 4 {
			return fmt.Errorf("%s levels: page too short", l.kind)
		}
		if _, err := f.ReadAt(prefix[:], off); err != nil {
			return err
		}
		n := int64(binary.LittleEndian.Uint32(prefix[:]))
		if n > size-4 {
			return fmt.Errorf("%s levels: %d bytes in a page with %d left", l.kind, n, size-4)
		}
		if l.encoding == format.RLE {
			data := make([]byte, n)
			if _, err := f.ReadAt(data, off+4); err != nil {
				return err
			}
			if err := checkLevels(data, l.max, v.NumValues); err != nil {
				return fmt.Errorf("%s %v", l.kind, err)
			}
		}
		off, size = off+4+n, size-4-n
	}
	return nil
}

// checkLevels walks RLE/bit-packed hybrid levels and refuses runs that
// claim more values than the page holds. parquet-go sizes its output by
// each run's header before decoding the run, so one damaged header can
// ask for gigabytes.
func checkLevels(data []byte, maxLevel int, numValues int32) error {
	if numValues < 0 {
		return fmt.Errorf("levels: %d values", numValues)
	}
	width := uint64(bits.Len(uint(maxLevel)))
	limit := uint64(numValues) + 7 // bit-packed runs pad to groups of 8
	var seen uint64
	for i := 0; i < len(data); {
		u, n := binary.Uvarint(data[i:])
		if n <= 0 {
			return fmt.Errorf("levels: damaged run header at byte %d", i)
		}
		i += n
		count := u >> 1
		if u&1 == 1 { // count groups of 8 values, width bytes each
			if count > limit/8 {
				return fmt.Errorf("levels: a run of %d×8 values in a page of %d", count, numValues)
			}
			i += int(count * width)
			count *= 8
		} else {
			i += int((width + 7) / 8)
		}
		if seen += count; seen > limit {
			return fmt.Errorf("levels: runs add up to more than the page's %d values", numValues)
		}
	}
	return nil
}

// maxInflated is the most bytes a page of compressed bytes can decode to.
// Snappy's largest expansion is a 64-byte copy from a 3-byte element. The
// other codecs get a bound beyond anything they reach on float or text
// data; the point is that a damaged size cannot ask for gigabytes.
func maxInflated(codec format.CompressionCodec, compressed int64) int64 {
	switch codec {
	case format.Uncompressed:
		return compressed
	case format.Snappy:
		return 22*compressed + 16
	}
	return 1024*compressed + 1024
}

// readPageHeader decodes the page header at off, which must end before end,
// and returns it with its encoded length.
func readPageHeader(f io.ReaderAt, off, end int64) (*format.PageHeader, int, error) {
	for window := int64(firstHeaderWindow); ; window *= 2 {
		buf := make([]byte, min(window, end-off))
		if _, err := f.ReadAt(buf, off); err != nil {
			return nil, 0, err
		}
		n, err := thriftStructLen(buf)
		if errors.Is(err, io.ErrUnexpectedEOF) && int64(len(buf)) < end-off {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		h := new(format.PageHeader)
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf[:n], h); err != nil {
			return nil, 0, err
		}
		return h, n, nil
	}
}

// thriftStructLen returns the length of the compact-protocol struct at the
// start of b without decoding it, after checking that every length and
// element count fits in what is left of b and that nesting stays shallow.
// Those are the numbers parquet-go's decoder allocates and recurses by.
func thriftStructLen(b []byte) (int, error) {
	w := thriftWalker{buf: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.pos, nil
}

type thriftWalker struct {
	buf []byte
	pos int
}

// Compact-protocol type codes.
const (
	tBoolTrue  = 1
	tBoolFalse = 2
	tByte      = 3
	tI16       = 4
	tI32       = 5
	tI64       = 6
	tDouble    = 7
	tBinary    = 8
	tList      = 9
	tSet       = 10
	tMap       = 11
	tStruct    = 12
	tUUID      = 13
)

func (w *thriftWalker) left() int { return len(w.buf) - w.pos }

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(w.left()) {
		return io.ErrUnexpectedEOF
	}
	w.pos += int(n)
	return nil
}

func (w *thriftWalker) byte() (byte, error) {
	if w.left() < 1 {
		return 0, io.ErrUnexpectedEOF
	}
	w.pos++
	return w.buf[w.pos-1], nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.buf[w.pos:])
	switch {
	case n == 0:
		return 0, io.ErrUnexpectedEOF
	case n < 0:
		return 0, fmt.Errorf("varint at byte %d overflows 64 bits", w.pos)
	}
	w.pos += n
	return v, nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > maxThriftNesting {
		return fmt.Errorf("structs nest more than %d deep at byte %d", maxThriftNesting, w.pos)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 { // STOP
			return nil
		}
		if h>>4 == 0 { // no field-id delta: the id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		switch typ := h & 0x0f; typ {
		case tBoolTrue, tBoolFalse: // a struct field's bool lives in its header
		default:
			if err := w.value(typ, depth); err != nil {
				return err
			}
		}
	}
}

func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case tBoolTrue, tBoolFalse, tByte:
		return w.skip(1)
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tDouble:
		return w.skip(8)
	case tUUID:
		return w.skip(16)
	case tBinary:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case tStruct:
		return w.structure(depth + 1)
	case tList, tSet:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		return w.elements(n, depth, h&0x0f)
	case tMap:
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		return w.elements(n, depth, kv>>4, kv&0x0f)
	}
	return fmt.Errorf("unknown thrift type %d at byte %d", typ, w.pos)
}

// elements walks n list elements or map entries, each made of one value
// of each of types. Every value takes at least a byte, so n beyond what is
// left is damage, caught before anyone allocates n of something.
func (w *thriftWalker) elements(n uint64, depth int, types ...byte) error {
	if n > uint64(w.left()) {
		return fmt.Errorf("%d elements at byte %d, only %d bytes left", n, w.pos, w.left())
	}
	for range n {
		for _, typ := range types {
			if err := w.value(typ, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
