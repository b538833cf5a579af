package parquetio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
)

// plainListCursor reads a float-list column chunk made of uncompressed PLAIN
// v2 data pages, which is what Writer writes and checkPages tells apart,
// straight from the file into the row's array. parquet-go would
// decode each page into buffers of its own beside the row: the page bytes,
// both levels expanded to a byte per value, and the values, about 2.5 rows
// of width 1024 × depth 16. Here levels are decoded a slice at a time and
// checked as they go, and a page that ends within the row being read lands
// in the row's array directly. A page that goes on into the next row, as
// small rows share pages, is read whole into a reused buffer first, so that its
// CRC is checked before any of its values is handed out, as parquet-go does.
type plainListCursor struct {
	spec     columnSpec
	file     io.ReaderAt
	off, end int64 // next page header; end of the chunk

	// The current page.
	left       int    // values not yet read
	valOff     int64  // file offset of the next value, read directly
	buffered   bool   // its values are in buf from bufPos
	crc        uint32 // of what has been read of a directly read page
	wantCRC    uint32
	hasCRC     bool
	reps, defs levelDecoder

	buf    []float32 // a page shared with the next row
	bufPos int
	levels []byte // the current page's encoded levels
	scrap  []byte // decoded levels of a stretch of values
	want   []byte // expected repetition levels of the stretch
}

// levelStretch is how many levels are decoded and checked at a time.
const levelStretch = 64 << 10

func newPlainListCursor(spec columnSpec, f io.ReaderAt, off, size int64) *plainListCursor {
	return &plainListCursor{
		spec: spec,
		file: f,
		off:  off,
		end:  off + size,
	}
}

// nextPage reads the next page's header and levels; need is how many values
// the row being read still lacks. io.EOF means the chunk is exhausted.
func (c *plainListCursor) nextPage(need int) error {
	for {
		if c.off >= c.end {
			return io.EOF
		}
		h, n, err := readPageHeader(c.file, c.off, c.end)
		if err != nil {
			return fmt.Errorf("column %s page header at offset %d: %v", c.spec.name, c.off, err)
		}
		body := c.off + int64(n)
		size := int64(h.CompressedPageSize)
		c.off = body + size // checkPages checked that the page lies in the chunk
		v := &h.DataPageHeaderV2.V
		if v.NumValues == 0 {
			continue
		}
		nl := int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
		if size-nl != 4*int64(v.NumValues) {
			return fmt.Errorf("column %s page at offset %d has %d bytes of values for %d floats",
				c.spec.name, body, size-nl, v.NumValues)
		}
		c.levels = grow(c.levels, int(nl))
		if _, err := c.file.ReadAt(c.levels, body); err != nil {
			return err
		}
		c.hasCRC = h.CRC != 0
		c.wantCRC = uint32(h.CRC)
		c.crc = crc32.Update(0, crc32.IEEETable, c.levels)
		nv := int(v.NumValues)
		c.reps = levelDecoder{
			data:  c.levels[:v.RepetitionLevelsByteLength],
			width: uint(bits.Len(uint(c.spec.listDepth))),
		}
		c.defs = levelDecoder{
			data:  c.levels[v.RepetitionLevelsByteLength:],
			width: uint(bits.Len(uint(c.spec.maxDef()))),
		}
		c.left = nv
		c.valOff = body + nl
		c.buffered = nv > need
		if !c.buffered {
			return nil
		}
		c.buf = resize(c.buf, nv)
		c.bufPos = 0
		if err := c.readValues(c.buf); err != nil {
			return err
		}
		return c.checkCRC()
	}
}

// readValues reads the next len(out) values of a page from the file.
func (c *plainListCursor) readValues(out []float32) error {
	b := floatBytes(out)
	if _, err := c.file.ReadAt(b, c.valOff); err != nil {
		return err
	}
	c.valOff += int64(len(b))
	c.crc = crc32.Update(c.crc, crc32.IEEETable, b)
	fromPlain(out)
	return nil
}

func (c *plainListCursor) checkCRC() error {
	if c.hasCRC && c.crc != c.wantCRC {
		return fmt.Errorf("column %s: crc32 checksum mismatch in a page: want=0x%08X got=0x%08X",
			c.spec.name, c.wantCRC, c.crc)
	}
	return nil
}

// readList fills out with the next row's list values, checking that every
// value is present, with definition levels at the maximum, and that the
// nesting is that of strides, as fillReps lays it out.
func (c *plainListCursor) readList(out []float32, strides []int) error {
	for k := 0; k < len(out); {
		if c.left == 0 {
			if err := c.nextPage(len(out) - k); err != nil {
				return shortColumn(c.spec, err)
			}
		}
		m := min(len(out)-k, c.left)
		if err := c.checkLevels(k, m, strides); err != nil {
			return err
		}
		if c.buffered {
			copy(out[k:k+m], c.buf[c.bufPos:])
			c.bufPos += m
		} else if err := c.readValues(out[k : k+m]); err != nil {
			return err
		}
		k += m
		if c.left -= m; c.left == 0 && !c.buffered {
			if err := c.checkCRC(); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLevels decodes and checks the levels of the next m values, value k
// of the row onwards.
func (c *plainListCursor) checkLevels(k, m int, strides []int) error {
	def := byte(c.spec.maxDef())
	for end := k + m; k < end; {
		n := min(end-k, levelStretch)
		c.scrap = grow(c.scrap, n)
		c.want = grow(c.want, n)
		if err := c.defs.read(c.scrap); err != nil {
			return fmt.Errorf("column %s definition levels: %v", c.spec.name, err)
		}
		if bytes.Count(c.scrap, []byte{def}) != n {
			return fmt.Errorf("column %s has a null or an empty list "+
				"(definition levels other than %d)", c.spec.name, def)
		}
		if err := c.reps.read(c.scrap); err != nil {
			return fmt.Errorf("column %s repetition levels: %v", c.spec.name, err)
		}
		if err := checkReps(c.spec, c.scrap, c.want, k, strides); err != nil {
			return err
		}
		k += n
	}
	return nil
}

// finish checks that the chunk holds nothing beyond the rows read.
func (c *plainListCursor) finish() error {
	if c.left == 0 {
		if err := c.nextPage(0); !errors.Is(err, io.EOF) {
			if err != nil {
				return err
			}
		}
	}
	if c.left != 0 {
		return fmt.Errorf("column %s has values beyond the row count and declared shape",
			c.spec.name)
	}
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// levelDecoder decodes parquet's RLE/bit-packed hybrid encoding of levels
// of width bits each, at most 8 here, a stretch at a time.
type levelDecoder struct {
	data  []byte // runs not yet started
	width uint
	run   int // values left in the current run
	rle   bool
	value byte   // of an RLE run
	bits  []byte // of a bit-packed run
	bit   uint   // next bit of bits
}

func (d *levelDecoder) read(dst []byte) error {
	for i := 0; i < len(dst); {
		for d.run == 0 {
			if err := d.nextRun(); err != nil {
				return err
			}
		}
		n := min(d.run, len(dst)-i)
		if d.rle {
			for j := i; j < i+n; j++ {
				dst[j] = d.value
			}
		} else {
			mask := uint16(1)<<d.width - 1
			for j := i; j < i+n; j++ {
				at := d.bit / 8
				v := uint16(d.bits[at])
				if int(at)+1 < len(d.bits) {
					v |= uint16(d.bits[at+1]) << 8
				}
				dst[j] = byte(v >> (d.bit % 8) & mask)
				d.bit += d.width
			}
		}
		d.run -= n
		i += n
	}
	return nil
}

func (d *levelDecoder) nextRun() error {
	if len(d.data) == 0 {
		return errors.New("they end before the page's values do")
	}
	h, n := binary.Uvarint(d.data)
	if n <= 0 || h>>1 > math.MaxInt32 {
		return errors.New("damaged run header")
	}
	d.data = d.data[n:]
	count := int(h >> 1)
	if h&1 == 1 { // count groups of 8 values, width bytes each
		size := count * int(d.width)
		if size > len(d.data) {
			return errors.New("a bit-packed run beyond their end")
		}
		d.rle = false
		d.bits = d.data[:size]
		d.bit = 0
		d.run = 8 * count
		d.data = d.data[size:]
		return nil
	}
	size := int(d.width+7) / 8
	if size > len(d.data) {
		return errors.New("a run without its value")
	}
	var v uint64
	for j := size - 1; j >= 0; j-- {
		v = v<<8 | uint64(d.data[j])
	}
	if v >= 1<<d.width {
		return fmt.Errorf("a level %d wider than %d bits", v, d.width)
	}
	d.rle = true
	d.value = byte(v)
	d.run = count
	d.data = d.data[size:]
	return nil
}
