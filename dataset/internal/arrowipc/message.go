package arrowipc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The MessageHeader union's tags of Message.fbs: what a message of a
// stream is.
const (
	HeaderSchema          = 1
	HeaderDictionaryBatch = 2
	HeaderRecordBatch     = 3
)

// Message is the flatbuffer of one IPC message, decoded: its header's
// type, the length of the body that follows the flatbuffer, and the header
// itself, Fields and Metadata for a schema, Batch for a record batch.
// Other headers decode to their type alone.
type Message struct {
	Header     uint8
	BodyLength int64
	Fields     []Field
	Metadata   []KeyValue
	Batch      RecordBatch
}

// Buffer is where one buffer of a record batch lies: Offset bytes into the
// message's body, Length bytes long.
type Buffer struct{ Offset, Length int64 }

// RecordBatch is a record batch's header: its row count, one FieldNode a
// field of the schema in pre-order, and its buffers in the same order.
// Compressed says a BodyCompression is set: the body's buffers are
// compressed. Variadic counts the variadicBufferCounts, which only view types
// have.
type RecordBatch struct {
	Length     int64
	Nodes      []FieldNode
	Buffers    []Buffer
	Compressed bool
	Variadic   int
}

// ParseMessage decodes an IPC message's flatbuffer, the bytes that follow
// the continuation marker and the length in a stream. Like
// ParseSchemaMessage it checks every offset against the buffer, and
// refuses a message of another metadata version than V5, which every
// pyarrow datasets takes, 15 or later, writes, a big-endian or
// dictionary-encoded schema, and a negative length.
func ParseMessage(fb []byte) (Message, error) {
	r := reader{buf: fb}
	m := r.table(r.u32(0))
	if v := r.int16(m, 0, 0); v != 4 && r.err == nil {
		r.failf("metadata version %d, not V5", v)
	}
	msg := Message{Header: r.uint8(m, 1, 0), BodyLength: r.int64(m, 3)}
	header := r.ref(m, 2)
	if header == 0 && r.err == nil {
		r.failf("a message of type %d without its header", msg.Header)
	}
	switch msg.Header {
	case HeaderSchema:
		msg.Fields, msg.Metadata = r.schema(r.table(header))
	case HeaderRecordBatch:
		msg.Batch = r.recordBatch(r.table(header))
	}
	if msg.BodyLength < 0 {
		r.failf("a body length of %d", msg.BodyLength)
	}
	if r.err != nil {
		return Message{}, r.err
	}
	return msg, nil
}

// ParseSchemaMessage decodes an encapsulated IPC Schema message, as
// SchemaMessage writes it, into its fields and schema metadata: what
// pyarrow builds a file's column types from. The message comes from a
// file, so every offset and length is checked against the buffer first; a
// message that does not decode is an error, never a panic. Types outside
// those of this package decode as their tag, which no expected type
// equals; a big-endian schema, a dictionary-encoded field or a message
// other than a V5 Schema is an error.
func ParseSchemaMessage(msg []byte) (fields []Field, metadata []KeyValue, err error) {
	if len(msg) < 8 || binary.LittleEndian.Uint32(msg) != 0xFFFFFFFF {
		return nil, nil, errors.New("it does not begin with the IPC continuation marker")
	}
	n := binary.LittleEndian.Uint32(msg[4:])
	if uint64(n) > uint64(len(msg)-8) {
		return nil, nil, fmt.Errorf("its flatbuffer length %d runs past its %d bytes", n, len(msg))
	}
	m, err := ParseMessage(msg[8 : 8+n])
	if err != nil {
		return nil, nil, err
	}
	if m.Header != HeaderSchema {
		return nil, nil, fmt.Errorf("a message of header type %d, not a Schema", m.Header)
	}
	return m.Fields, m.Metadata, nil
}

func (r *reader) schema(s table) ([]Field, []KeyValue) {
	if e := r.int16(s, 0, 0); e != 0 {
		r.failf("a big-endian schema")
	}
	var fields []Field
	for _, f := range r.vector(r.ref(s, 1)) {
		fields = append(fields, r.field(f, 0))
	}
	return fields, r.keyValues(s, 2)
}

// recordBatch decodes a RecordBatch table: length, nodes, buffers,
// compression, variadicBufferCounts.
func (r *reader) recordBatch(b table) RecordBatch {
	rb := RecordBatch{
		Length:     r.int64(b, 0),
		Compressed: r.slot(b, 3) != 0,
	}
	for _, p := range r.pairs(r.ref(b, 1)) {
		rb.Nodes = append(rb.Nodes, FieldNode{Length: p[0], NullCount: p[1]})
	}
	for _, p := range r.pairs(r.ref(b, 2)) {
		rb.Buffers = append(rb.Buffers, Buffer{Offset: p[0], Length: p[1]})
	}
	if v := r.ref(b, 4); v != 0 {
		rb.Variadic = int(r.u32(v))
	}
	return rb
}

// pairs reads a vector of 16-byte structs of two int64 fields at pos, as
// FieldNode and Buffer are.
func (r *reader) pairs(pos uint64) [][2]int64 {
	if pos == 0 {
		return nil
	}
	n := r.u32(pos)
	if !r.in(pos+4, 16*n) {
		return nil
	}
	out := make([][2]int64, n)
	for i := range out {
		at := pos + 4 + 16*uint64(i)
		out[i] = [2]int64{r.i64(at), r.i64(at + 8)}
	}
	return out
}

func (r *reader) i64(pos uint64) int64 {
	if !r.in(pos, 8) {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(r.buf[pos:]))
}

// int64 is field i of t, a long whose default is 0.
func (r *reader) int64(t table, i uint64) int64 {
	p := r.slot(t, i)
	if p == 0 {
		return 0
	}
	return r.i64(p)
}

// FixedSize is the list size of a fixed_size_list, and false for another
// type.
func (t Type) FixedSize() (int32, bool) { return t.listSize, t.tag == tagFixedSizeList }

// ByteWidth is the size in bytes of one value of an integer or floating
// point type, 0 for another type.
func (t Type) ByteWidth() int64 {
	switch t.tag {
	case tagInt:
		return int64(t.bitWidth) / 8
	case tagFloatingPoint:
		return 2 << t.precision
	}
	return 0
}
