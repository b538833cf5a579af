package prepared

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// A shard is read as the Arrow columnar format's IPC streaming format, in
// https://arrow.apache.org/docs/format/Columnar.html#ipc-streaming-format,
// as pyarrow's ipc.open_stream reads it under datasets'
// MemoryMappedTable.from_file in datasets/table.py: a Schema message, record
// batches, the end-of-stream marker. Each message is the continuation
// marker 0xFFFFFFFF, the length of its flatbuffer, the flatbuffer, and the
// body the flatbuffer says is bodyLength bytes long.

// maxMessageBytes bounds a message's flatbuffer, read whole: whestbench's
// schema message is about 2 KiB and a record batch's header under 1 KiB.
const maxMessageBytes = 1 << 20

// windowBytes is how much of a buffer is read at a time: a row's slice of
// each buffer is read through a window of its own, so a record batch of
// any size is never held, and rows read in order cost few reads.
const windowBytes = 16 << 10

// node is one field of the schema as a record batch lays it out, in
// pre-order, as the columnar format's "Buffer Layout" says: a validity bitmap,
// then offsets for a list or a string, then values for a string or a
// fixed-width type.
type node struct {
	path  string // the field, for errors: weights.item.item
	top   bool   // a column
	kind  kind
	width int64 // bytes of a fixed-width value; values of a fixed-size list
	buf   int   // its validity bitmap's buffer; the others follow
}

type kind int

const (
	fixed kind = iota
	utf8Kind
	list
	fixedList
)

// buffers is how many buffers a field of kind k has.
func (k kind) buffers() int { return [...]int{fixed: 2, utf8Kind: 3, list: 2, fixedList: 1}[k] }

// newLayout is the record batch layout of whestbench's schema of width w
// and depth d, as schema.ArrowFields gives it: its fields in pre-order.
func newLayout(w, d int) []node {
	fields, _ := schema.ArrowFields(w, d)
	var out []node
	bufs := 0
	var walk func(f arrowipc.Field, path string, top bool)
	walk = func(f arrowipc.Field, path string, top bool) {
		n := node{path: path, top: top, buf: bufs}
		switch size, isFixed := f.Type.FixedSize(); {
		case f.Type == arrowipc.Utf8:
			n.kind = utf8Kind
		case f.Type == arrowipc.List:
			n.kind = list
		case isFixed:
			n.kind, n.width = fixedList, int64(size)
		default:
			n.kind, n.width = fixed, f.Type.ByteWidth()
		}
		bufs += n.kind.buffers()
		out = append(out, n)
		for _, c := range f.Children {
			walk(c, path+"."+c.Name, false)
		}
	}
	for _, f := range fields {
		walk(f, f.Name, true)
	}
	return out
}

// shard is one Arrow file of a split being read: where its next message
// begins, and the record batch being read.
type shard struct {
	name   string
	f      *os.File
	size   int64
	off    int64
	layout []node
	cols   [schema.NumColumns]int     // columns(layout)
	dims   [schema.NumColumns][]int64 // each array's dimensions, from arrayDims
	b      batch
	win    []window // one a buffer
}

// batch is a record batch whose lengths have been checked against the
// file: its rows, the next to read, its field nodes and its buffers at
// their offsets in the file.
type batch struct {
	index      int
	rows, next int64
	nodes      []arrowipc.FieldNode
	bufs       []arrowipc.Buffer
}

// window is a piece of the file, at offset at.
type window struct {
	at   int64
	data []byte
	mem  []byte
}

// openShard opens the shard at path and checks its schema message against
// the schema of width w and depth d.
func openShard(path string, w, d int, layout []node) (*shard, error) {
	f, size, err := openPlain(path)
	if err != nil {
		return nil, err
	}
	last := layout[len(layout)-1]
	s := &shard{
		name:   filepath.Base(path),
		f:      f,
		size:   size,
		layout: layout,
		cols:   columns(layout),
		dims:   arrayDims(w, d),
		b:      batch{index: -1},
		win:    make([]window, last.buf+last.kind.buffers()),
	}
	if err := s.checkSchema(w, d); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// checkSchema reads the stream's schema message and compares it with the
// split's in meaning, as pyarrow and datasets read it: the fields, with
// their names and order, types, nullability, the Array2D and Array3D
// extension names and metadata, and the features of the huggingface schema
// metadata where there are some, since Features.from_arrow_schema takes a
// column's feature from there. Other schema metadata no reader of the tree
// looks at.
func (s *shard) checkSchema(w, d int) error {
	m, end, err := s.message("its schema message")
	if err != nil {
		return err
	}
	if end || m.Header != arrowipc.HeaderSchema || m.BodyLength != 0 {
		return errors.New("does not begin with a schema message")
	}
	if diff := schema.ArrowFieldsDiff(m.Fields, w, d); diff != "" {
		return fmt.Errorf("its schema is not the split's of width %d and depth %d: %s; "+
			"datasets would read other column types", w, d, diff)
	}
	for _, kv := range m.Metadata {
		if kv.Key != schema.HFMetadataKey {
			continue
		}
		features, err := metadataFeatures(kv.Value)
		if err != nil {
			return fmt.Errorf("its schema's %q metadata %v", kv.Key, err)
		}
		if features == nil {
			continue
		}
		if diff := featuresDiff(features, w, d); diff != "" {
			return fmt.Errorf("the features of its schema's %q metadata are not the split's "+
				"of width %d and depth %d: %s", kv.Key, w, d, diff)
		}
	}
	return nil
}

// metadataFeatures is the info.features of an Arrow schema's huggingface
// metadata, as Features.from_arrow_schema reads it: nil when there are
// none.
func metadataFeatures(text string) (any, error) {
	if !utf8.ValidString(text) {
		return nil, errors.New("is not UTF-8")
	}
	v, err := pyjson.Loads([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("is not JSON (%v)", err)
	}
	doc, ok := v.(*pyjson.Object)
	if !ok {
		return nil, fmt.Errorf("is a JSON %s, not an object", pyjson.Kind(v))
	}
	info, ok := doc.Get("info")
	if !ok {
		return nil, nil
	}
	fields, ok := info.(*pyjson.Object)
	if !ok {
		return nil, fmt.Errorf("has an info that is a JSON %s, not an object", pyjson.Kind(info))
	}
	features, _ := fields.Get("features")
	return features, nil
}

// message reads the message at s.off, what being what it should be for
// errors, and moves s.off past its body. end is the end-of-stream marker,
// after which the file must end.
func (s *shard) message(what string) (m arrowipc.Message, end bool, err error) {
	at := s.off
	prefix := make([]byte, 8)
	if err := s.readAt(prefix, at, what); err != nil {
		return m, false, err
	}
	if binary.LittleEndian.Uint32(prefix) != 0xFFFFFFFF {
		return m, false, fmt.Errorf("has no IPC continuation marker at byte %d, "+
			"where %s begins", at, what)
	}
	n := int64(int32(binary.LittleEndian.Uint32(prefix[4:])))
	if n == 0 {
		if s.off = at + 8; s.off != s.size {
			return m, true, fmt.Errorf("goes on after the end of its stream "+
				"(byte %d of %d)", s.off, s.size)
		}
		return m, true, nil
	}
	if n < 0 || n > maxMessageBytes {
		return m, false, fmt.Errorf("declares a message of %d bytes at byte %d, "+
			"where an Arrow writer's take at most %d", n, at, maxMessageBytes)
	}
	fb := make([]byte, n)
	if err := s.readAt(fb, at+8, what); err != nil {
		return m, false, err
	}
	if m, err = arrowipc.ParseMessage(fb); err != nil {
		return m, false, fmt.Errorf("%s at byte %d does not decode: %v", what, at, err)
	}
	body := at + 8 + n
	if m.BodyLength > s.size-body {
		return m, false, fmt.Errorf("declares a body of %d bytes at byte %d for %s, "+
			"past the end of its %d bytes: it is truncated", m.BodyLength, body, what, s.size)
	}
	s.off = body + m.BodyLength
	return m, false, nil
}

// readAt fills p from the file at off, what being what is read there.
func (s *shard) readAt(p []byte, off int64, what string) error {
	if int64(len(p)) > s.size-off {
		return fmt.Errorf("ends at byte %d, in %s: it is truncated", s.size, what)
	}
	if _, err := s.f.ReadAt(p, off); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("ends at byte %d, in %s: it is truncated", off, what)
		}
		return fmt.Errorf("cannot be read at byte %d (%v)", off, err)
	}
	return nil
}

// next reads the stream's next message: a record batch, which it checks
// and makes the batch being read, or the end of the stream.
func (s *shard) next() (end bool, err error) {
	index := s.b.index + 1
	what := fmt.Sprintf("record batch %d", index)
	at := s.off
	m, end, err := s.message(what)
	if err != nil || end {
		return end, err
	}
	switch m.Header {
	case arrowipc.HeaderRecordBatch:
	case arrowipc.HeaderDictionaryBatch:
		return false, fmt.Errorf("holds a dictionary batch at byte %d: "+
			"no column of the split is dictionary-encoded", at)
	case arrowipc.HeaderSchema:
		return false, fmt.Errorf("holds a second schema message at byte %d", at)
	default:
		return false, fmt.Errorf("holds a message of type %d at byte %d, "+
			"where a record batch or the end of the stream belongs", m.Header, at)
	}
	b := batch{index: index, rows: m.Batch.Length, nodes: m.Batch.Nodes, bufs: m.Batch.Buffers}
	body := s.off - m.BodyLength
	if err := s.checkBatch(&b, m.Batch, body, m.BodyLength); err != nil {
		return false, fmt.Errorf("%s (at byte %d) %w", what, at, err)
	}
	s.b = b
	return false, nil
}
