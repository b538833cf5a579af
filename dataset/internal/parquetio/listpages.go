package parquetio

import (
	"bytes"
	"hash/crc32"
	"math/bits"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/plain"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// listChunk encodes one float-list column of a row group the way
// parquet-go v0.32.0's ColumnWriter does for this package's configuration,
// PLAIN, uncompressed, data page v2, page statistics and CRC, so files
// are byte-identical to what that writer makes; parquet_oracle_test.go holds
// that reference. Every row of a shape has the same levels, so a page's
// encoded levels depend only on its row count and are cached by it.
type listChunk struct {
	col      int
	maxRep   byte
	maxDef   byte
	strides  []int // the row's nesting, as fillReps lays it out
	rowLen   int   // values in one row
	rowSize  int64 // what one row adds to parquet-go's column buffer Size
	pageSize int64 // parquet-go cuts a page once Size reaches this
	// groupBytes is the PLAIN size of a full row group's values, which
	// values is grown to at once.
	groupBytes int

	page     []float32 // values of the open page
	pageRows int
	levels   map[int]*pageLevels
	header   bytes.Buffer
	enc      *thrift.Encoder

	// The row group so far: the pages' PLAIN values back to back, and for
	// each page its header and levels, which go before its values.
	values      []byte
	heads       []pageHead
	numRows     int64
	indexer     parquet.ColumnIndexer
	meta        format.ColumnMetaData
	minV, maxV  parquet.Value
	hasBounds   bool
	offsets     []format.PageLocation
	repHist     []int64
	defHist     []int64
	pageRepHist []int64
	pageDefHist []int64
}

type pageHead struct {
	header []byte
	levels *pageLevels
	size   int // of the values
}

// pageLevels are the encoded levels of a page of some number of rows and
// their histograms.
type pageLevels struct {
	reps, defs       []byte
	repHist, defHist []int64
}

func newListChunk(
	col int,
	rowLen int,
	strides []int,
	pageBufferSize int,
	groupRows int64,
) *listChunk {
	c := &listChunk{
		col:        col,
		maxRep:     byte(columns[col].listDepth),
		maxDef:     byte(columns[col].maxDef()),
		strides:    strides,
		rowLen:     rowLen,
		groupBytes: int(groupRows) * 4 * rowLen,
		// repeatedColumnBuffer.Size: 8 bytes of row offsets, one repetition
		// and one definition level byte and 4 float bytes per value.
		rowSize: 8 + 6*int64(rowLen),
		// ColumnWriter.bufferSize.
		pageSize: int64(int32(float64(pageBufferSize) * 0.98)),
		levels:   map[int]*pageLevels{},
	}
	c.enc = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&c.header))
	c.reset()
	return c
}

func (c *listChunk) reset() {
	c.values = c.values[:0]
	c.heads = c.heads[:0]
	c.numRows = 0
	c.indexer = parquet.FloatType.NewColumnIndexer(parquet.DefaultColumnIndexSizeLimit)
	c.meta = format.ColumnMetaData{}
	c.minV, c.maxV = parquet.Value{}, parquet.Value{}
	c.hasBounds = false
	c.offsets = nil
	c.repHist = make([]int64, c.maxRep+1)
	c.defHist = make([]int64, c.maxDef+1)
	c.pageRepHist, c.pageDefHist = nil, nil
}

func (c *listChunk) writeRow(vals []float32) {
	if c.pageRows == 0 && c.rowSize >= c.pageSize {
		// A row that fills a page on its own, as a large MLP's weights do, is
		// encoded straight from the caller's array: copying it into c.page
		// first would hold the row twice more.
		_ = c.encodePage(vals, 1, nil) // buffered: cannot fail
		return
	}
	c.page = append(c.page, vals...)
	c.pageRows++
	if int64(c.pageRows)*c.rowSize >= c.pageSize {
		c.flushPage()
	}
}

func (c *listChunk) levelsOf(rows int) *pageLevels {
	if lv := c.levels[rows]; lv != nil {
		return lv
	}
	// The plain levels are built only for this: a row's are as large as
	// its weights, 16 MiB at width 1024 × depth 16, and only the encoded
	// ones, a few bytes, are kept.
	n := rows * c.rowLen
	reps := repPattern(c.rowLen, c.strides)
	if rows > 1 {
		reps = bytes.Repeat(reps, rows)
	}
	defs := bytes.Repeat([]byte{c.maxDef}, n)
	lv := &pageLevels{repHist: make([]int64, c.maxRep+1), defHist: make([]int64, c.maxDef+1)}
	lv.reps, _ = (&rle.Encoding{BitWidth: bits.Len8(c.maxRep)}).EncodeLevels(nil, reps)
	lv.defs, _ = (&rle.Encoding{BitWidth: bits.Len8(c.maxDef)}).EncodeLevels(nil, defs)
	for _, r := range reps {
		lv.repHist[r]++
	}
	lv.defHist[c.maxDef] = int64(n)
	c.levels[rows] = lv
	return lv
}

// flushPage encodes the open page, if it has rows.
func (c *listChunk) flushPage() {
	if c.pageRows == 0 {
		return
	}
	_ = c.encodePage(c.page, c.pageRows, nil) // buffered: cannot fail
	c.page = c.page[:0]
	c.pageRows = 0
}

// encodePage adds a page of rows rows whose values are vals to the row
// group. With emit nil the page is buffered for writeTo; otherwise it is
// written through emit at once, its values straight from vals.
func (c *listChunk) encodePage(vals []float32, rows int, emit func([]byte) error) error {
	p := &encodedPage{levels: c.levelsOf(rows), numValues: int64(len(vals)), rows: rows}
	page := parquet.FloatType.NewPage(c.col, len(vals), encoding.FloatValues(vals))
	p.minV, p.maxV, p.hasBounds = page.Bounds()
	p.body = c.pageValues(vals, emit == nil)
	c.encodeHeader(p)
	c.addPage(p)
	if emit == nil {
		c.heads = append(c.heads, pageHead{bytes.Clone(c.header.Bytes()), p.levels, len(p.body)})
		return nil
	}
	for _, b := range [...][]byte{c.header.Bytes(), p.levels.reps, p.levels.defs, p.body} {
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
}

// encodedPage is what encodePage's steps share about the page at hand.
type encodedPage struct {
	levels     *pageLevels
	numValues  int64 // values
	rows       int
	minV, maxV parquet.Value
	hasBounds  bool
	body       []byte // the PLAIN values
	total      int32  // header, levels and values
}

// pageValues PLAIN-encodes vals: at the end of c.values when buffered,
// otherwise into a buffer of their own.
func (c *listChunk) pageValues(vals []float32, buffered bool) []byte {
	if !buffered {
		return plainFloats(vals)
	}
	// Encoded in place at the end of c.values, saving a page-sized copy.
	// The first page grows it to a whole row group: growing by append's
	// doubling would leave up to twice that allocated, and hold the old and
	// the new copy together while it copies: a 64 MiB group would peak at 192.
	start := len(c.values)
	c.values = slices.Grow(c.values, max(4*len(vals), c.groupBytes-start))
	body, _ := (&plain.Encoding{}).EncodeFloat(c.values[start:start], vals)
	c.values = c.values[:start+len(body)]
	return body
}

// encodeHeader encodes p's page header into c.header and sets p.total.
func (c *listChunk) encodeHeader(p *encodedPage) {
	lv := p.levels
	crc := crc32.Update(0, crc32.IEEETable, lv.reps)
	crc = crc32.Update(crc, crc32.IEEETable, lv.defs)
	crc = crc32.Update(crc, crc32.IEEETable, p.body)
	size := len(lv.reps) + len(lv.defs) + len(p.body)
	hdr := format.PageHeader{
		Type:                 format.DataPageV2,
		UncompressedPageSize: int32(size),
		CompressedPageSize:   int32(size),
		CRC:                  int32(crc),
		DataPageHeaderV2: thrift.New(format.DataPageHeaderV2{
			NumValues:                  int32(p.numValues),
			NumRows:                    int32(p.rows),
			Encoding:                   format.Plain,
			DefinitionLevelsByteLength: int32(len(lv.defs)),
			RepetitionLevelsByteLength: int32(len(lv.reps)),
			IsCompressed:               thrift.New(false),
			Statistics: format.Statistics{
				Min:      p.minV.Bytes(),
				Max:      p.maxV.Bytes(),
				MinValue: p.minV.Bytes(),
				MaxValue: p.maxV.Bytes(),
			},
		}),
	}
	c.header.Reset()
	if err := c.enc.Encode(&hdr); err != nil {
		panic(err) // encoding a fixed struct into memory cannot fail
	}
	p.total = int32(c.header.Len() + size)
}

// addPage counts p into the row group's offset and column indexes, bounds,
// level histograms and sizes.
func (c *listChunk) addPage(p *encodedPage) {
	c.offsets = append(c.offsets, format.PageLocation{
		Offset:             c.meta.TotalCompressedSize,
		CompressedPageSize: p.total,
		FirstRowIndex:      c.numRows,
	})
	c.indexer.IndexPage(p.numValues, 0, p.minV, p.maxV)
	c.meta.NumValues += p.numValues
	if p.hasBounds {
		if !c.hasBounds || parquet.FloatType.Compare(p.maxV, c.maxV) > 0 {
			c.maxV = p.maxV
		}
		if !c.hasBounds || parquet.FloatType.Compare(p.minV, c.minV) < 0 {
			c.minV = p.minV
		}
		c.hasBounds = true
	}
	c.numRows += int64(p.rows)
	for i, v := range p.levels.repHist {
		c.repHist[i] += v
	}
	for i, v := range p.levels.defHist {
		c.defHist[i] += v
	}
	c.pageRepHist = append(c.pageRepHist, p.levels.repHist...)
	c.pageDefHist = append(c.pageDefHist, p.levels.defHist...)
	c.meta.TotalUncompressedSize += int64(p.total)
	c.meta.TotalCompressedSize += int64(p.total)
}

// finish closes the row group's last page and fills in its column chunk
// metadata, over the scratch file's, which has the fixed fields, and page
// indexes. Offsets are relative to the chunk start, which the caller adds.
func (c *listChunk) finish(
	meta *format.ColumnMetaData,
	ci *format.ColumnIndex,
	oi *format.OffsetIndex,
) {
	c.flushPage()
	meta.NumValues = c.meta.NumValues
	meta.TotalUncompressedSize = c.meta.TotalUncompressedSize
	meta.TotalCompressedSize = c.meta.TotalCompressedSize
	meta.Statistics = format.Statistics{}
	if c.hasBounds {
		meta.Statistics.MinValue = c.minV.Bytes()
		meta.Statistics.MaxValue = c.maxV.Bytes()
	}
	meta.EncodingStats = []format.PageEncodingStats{{
		PageType: format.DataPageV2, Encoding: format.Plain, Count: int32(len(c.offsets)),
	}}
	meta.SizeStatistics = format.SizeStatistics{
		RepetitionLevelHistogram: c.repHist,
		DefinitionLevelHistogram: c.defHist,
	}
	*ci = c.indexer.ColumnIndex()
	ci.RepetitionLevelHistogram = c.pageRepHist
	ci.DefinitionLevelHistogram = c.pageDefHist
	*oi = format.OffsetIndex{PageLocations: c.offsets}
}

// writeTo writes the row group's pages, each header, levels, then values.
func (c *listChunk) writeTo(emit func([]byte) error) error {
	values := c.values
	for _, h := range c.heads {
		for _, b := range [...][]byte{h.header, h.levels.reps, h.levels.defs, values[:h.size]} {
			if err := emit(b); err != nil {
				return err
			}
		}
		values = values[h.size:]
	}
	return nil
}
