package prepared

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// checkBatch checks what record batch b declares against the layout of
// the split's schema and against its body, of bodyLen bytes at file
// offset body, before anything is read there: the same fields, no
// compression, no null, every buffer within the body, and every buffer
// long enough for the values its field declares, as Arrow C++'s
// RecordBatch::Validate checks the lengths. It makes the buffers'
// offsets the file's.
func (s *shard) checkBatch(b *batch, rb arrowipc.RecordBatch, body, bodyLen int64) error {
	switch {
	case rb.Compressed:
		return errors.New("is compressed: datasets writes its batches uncompressed, " +
			"and the check reads no other")
	case rb.Variadic > 0:
		return errors.New("has variadic buffers, which no column of the split has")
	case len(rb.Nodes) != len(s.layout) || len(rb.Buffers) != len(s.win):
		return fmt.Errorf("has %d field nodes and %d buffers, where the split's schema has %d and %d",
			len(rb.Nodes), len(rb.Buffers), len(s.layout), len(s.win))
	case rb.Length < 0:
		return fmt.Errorf("declares %d rows", rb.Length)
	}
	for i, bf := range b.bufs {
		if bf.Offset < 0 || bf.Length < 0 || bf.Offset > bodyLen || bf.Length > bodyLen-bf.Offset {
			return fmt.Errorf("declares buffer %d at bytes %d to %d+%d of its body, which has %d: "+
				"its lengths run past the file", i, bf.Offset, bf.Offset, bf.Length, bodyLen)
		}
		b.bufs[i].Offset += body
	}
	for i, n := range s.layout {
		fn := b.nodes[i]
		if fn.NullCount != 0 {
			return fmt.Errorf("holds %d nulls in %s, where every value of the split is set",
				fn.NullCount, n.path)
		}
		if fn.Length < 0 || n.top && fn.Length != rb.Length {
			return fmt.Errorf("declares %d values of column %s for its %d rows",
				fn.Length, n.path, rb.Length)
		}
		if err := n.fits(i, b); err != nil {
			return fmt.Errorf("declares %d values of %s, %v: its lengths run past the file",
				fn.Length, n.path, err)
		}
	}
	return nil
}

// fits checks that node n, the i-th of b, has buffers long enough for its
// declared length: a fixed-width value of width bytes each, an offset
// each and one more, and for a fixed-size list, width of its child's
// values each.
func (n node) fits(i int, b *batch) error {
	length := b.nodes[i].Length
	switch n.kind {
	case fixed:
		if have := b.bufs[n.buf+1].Length; length > have/n.width {
			return fmt.Errorf("more than its buffer of %d bytes holds", have)
		}
	case utf8Kind, list:
		if have := b.bufs[n.buf+1].Length; length > 0 && length >= have/4 {
			return fmt.Errorf("more than its %d bytes of offsets hold", have)
		}
	case fixedList:
		if have := b.nodes[i+1].Length; length > have/n.width {
			return fmt.Errorf("more lists of %d than its %d values fill", n.width, have)
		}
	}
	return nil
}

// bytes returns n bytes of buffer buf from offset off into it, n at most
// windowBytes, through the buffer's window: rows read in order are read
// from the file a window at a time.
func (s *shard) bytes(buf int, off, n int64) ([]byte, error) {
	bf := s.b.bufs[buf]
	if off < 0 || n > windowBytes || n > bf.Length-off {
		return nil, fmt.Errorf("a value lies outside buffer %d of record batch %d", buf, s.b.index)
	}
	at := bf.Offset + off
	w := &s.win[buf]
	if at >= w.at && at+n <= w.at+int64(len(w.data)) {
		return w.data[at-w.at:][:n], nil
	}
	if w.mem == nil {
		w.mem = make([]byte, windowBytes)
	}
	w.at, w.data = at, w.mem[:min(windowBytes, bf.Offset+bf.Length-at)]
	if err := s.readAt(w.data, at, fmt.Sprintf("record batch %d", s.b.index)); err != nil {
		w.data = nil
		return nil, err
	}
	return w.data[:n], nil
}

// span reads the count+1 offsets from idx of node i, a list or a string,
// whose every step must be step, the parquet row's length there, the
// last within limit, the length of what they index; it returns the first.
// Offsets that step so index one run of values, whatever the offsets of
// other rows.
func (s *shard) span(i int, idx, count, step, limit int64) (int64, error) {
	n := s.layout[i]
	var first, prev int64
	for k := int64(0); k <= count; {
		m := min(count+1-k, windowBytes/4)
		raw, err := s.bytes(n.buf+1, 4*(idx+k), 4*m)
		if err != nil {
			return 0, err
		}
		for j := range m {
			o := int64(int32(binary.LittleEndian.Uint32(raw[4*j:])))
			switch {
			case k+j == 0:
				first = o
			case o-prev != step && n.kind == utf8Kind:
				return 0, fmt.Errorf("%s is %d bytes long where the parquet's is %d",
					n.path, o-prev, step)
			case o-prev != step:
				return 0, fmt.Errorf("%s holds a list of %d values where the parquet's hold %d",
					n.path, o-prev, step)
			}
			prev = o
		}
		k += m
	}
	if first < 0 || prev > limit {
		return 0, fmt.Errorf("%s has offsets %d to %d, outside the %d values they index",
			n.path, first, prev, limit)
	}
	return first, nil
}

// sameBytes compares len(want) bytes of buffer buf from off with want.
func (s *shard) sameBytes(buf int, off int64, want []byte) (int, error) {
	for k := 0; k < len(want); {
		m := min(len(want)-k, windowBytes)
		got, err := s.bytes(buf, off+int64(k), int64(m))
		if err != nil {
			return 0, err
		}
		for j := range m {
			if got[j] != want[k+j] {
				return k + j, nil
			}
		}
		k += m
	}
	return -1, nil
}

// sameFloats compares the float32 values of node i from value start with
// want, bit for bit: its first difference is an error naming column[index].
func (s *shard) sameFloats(i int, start int64, want []float32, column string) error {
	buf := s.layout[i].buf + 1
	for k := 0; k < len(want); {
		m := min(len(want)-k, windowBytes/4)
		raw, err := s.bytes(buf, 4*(start+int64(k)), 4*int64(m))
		if err != nil {
			return err
		}
		for j := range m {
			got, x := binary.LittleEndian.Uint32(raw[4*j:]), want[k+j]
			if got != math.Float32bits(x) {
				return fmt.Errorf("%s[%d] is %v (0x%08x) where the parquet's is %v (0x%08x)",
					column, k+j, math.Float32frombits(got), got, x, math.Float32bits(x))
			}
		}
		k += m
	}
	return nil
}

// scalar is the n-byte little-endian value of node i in the row being
// read, and whether its bits are want's.
func (s *shard) scalar(i int, n int64, want uint64) (uint64, bool, error) {
	b, err := s.bytes(s.layout[i].buf+1, n*s.b.next, n)
	if err != nil {
		return 0, false, err
	}
	var v [8]byte
	copy(v[:], b)
	got := binary.LittleEndian.Uint64(v[:])
	return got, got == want, nil
}

// text compares the string of node i in the row being read with want.
func (s *shard) text(i int, want, column string) error {
	n := s.layout[i]
	start, err := s.span(i, s.b.next, 1, int64(len(want)), s.b.bufs[n.buf+2].Length)
	if err != nil {
		return err
	}
	at, err := s.sameBytes(n.buf+2, start, []byte(want))
	if err == nil && at >= 0 {
		err = fmt.Errorf("%s differs at byte %d from the parquet's %s", column, at, excerpt(want))
	}
	return err
}

// excerpt is s quoted, its first 40 bytes when it is longer.
func excerpt(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q…", s[:40])
	}
	return fmt.Sprintf("%q", s)
}

// nested compares the float values of node i, lists nested len(dims) deep
// whose lengths are dims from the outside in, in the row being read, with
// want: each level's offsets for the row, then the values they index.
func (s *shard) nested(i int, dims []int64, want []float32, column string) error {
	start, count := s.b.next, int64(1)
	for k, n := range dims {
		var err error
		if start, err = s.span(i+k, start, count, n, s.b.nodes[i+k+1].Length); err != nil {
			return err
		}
		count *= n
	}
	return s.sameFloats(i+len(dims), start, want, column)
}

// compareRow compares the row being read with r column by column, and
// says where they first differ.
func (s *shard) compareRow(r *schema.Row) error {
	for i := range schema.Columns {
		if err := s.compareColumn(i, r); err != nil {
			return err
		}
	}
	return nil
}

// compareColumn compares column col of the row being read with r's: a
// scalar's bits, a string's bytes, an array's offsets a level and its
// values' bits.
func (s *shard) compareColumn(col int, r *schema.Row) error {
	c, i := &schema.Columns[col], s.cols[col]
	switch p := c.Of(r).(type) {
	case *int32:
		got, same, err := s.scalar(i, 4, uint64(uint32(*p)))
		if err != nil || !same {
			return cmp.Or(err, fmt.Errorf("%s is %d where the parquet's is %d", c.Name, int32(got), *p))
		}
		return nil
	case *int64:
		got, same, err := s.scalar(i, 8, uint64(*p))
		if err != nil || !same {
			return cmp.Or(err, fmt.Errorf("%s is %d where the parquet's is %d", c.Name, int64(got), *p))
		}
		return nil
	case *float64:
		want := math.Float64bits(*p)
		got, same, err := s.scalar(i, 8, want)
		if err != nil || !same {
			return cmp.Or(err, fmt.Errorf("%s is %v (0x%016x) where the parquet's is %v (0x%016x)",
				c.Name, math.Float64frombits(got), got, *p, want))
		}
		return nil
	case *string:
		return s.text(i, *p, c.Name)
	}
	if dims := s.dims[col]; len(dims) > 1 {
		return s.nested(i, dims, c.Floats(r), c.Name)
	}
	return s.sameFloats(i+1, s.b.next*s.dims[col][0], c.Floats(r), c.Name)
}

// arrayDims are the dimensions of each array column of width w and depth
// d, by its Col* index; nil for a scalar.
func arrayDims(w, d int) [schema.NumColumns][]int64 {
	var out [schema.NumColumns][]int64
	for i := range schema.Columns {
		for _, n := range schema.Columns[i].Dims(w, d) {
			out[i] = append(out[i], int64(n))
		}
	}
	return out
}

// columns is the node index of each column of layout, by its
// schema.Col* index.
func columns(layout []node) [schema.NumColumns]int {
	var col [schema.NumColumns]int
	c := 0
	for i, n := range layout {
		if n.top {
			col[c] = i
			c++
		}
	}
	return col
}
