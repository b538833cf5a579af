package arrowipc

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// String names t as Arrow does.
func (t Type) String() string {
	switch t.tag {
	case tagInt:
		s := "int"
		if !t.signed {
			s = "uint"
		}
		return s + strconv.Itoa(int(t.bitWidth))
	case tagFloatingPoint:
		switch t.precision {
		case 0:
			return "halffloat"
		case 1:
			return "float"
		case 2:
			return "double"
		}
		return fmt.Sprintf("floating point of precision %d", t.precision)
	case tagUtf8:
		return "string"
	case tagList:
		return "list"
	case tagFixedSizeList:
		return fmt.Sprintf("fixed_size_list[%d]", t.listSize)
	}
	return fmt.Sprintf("type #%d of Schema.fbs", t.tag)
}

// A message's schema is decoded following at most maxNesting levels of fields and
// decodes at most maxFields of them: whestbench's schema has 8 columns, 14
// fields in all, nesting four deep in weights, and a hostile message could
// otherwise point many children at one subtree, over and over.
const (
	maxNesting = 16
	maxFields  = 1024
)

// reader reads a flatbuffer whose offsets nobody vouched for: the first
// bad one sets err, and everything read after it is zero.
type reader struct {
	buf    []byte
	err    error
	fields int // decoded so far
}

func (r *reader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// in reports whether n bytes at pos lie in the buffer.
func (r *reader) in(pos, n uint64) bool {
	if r.err != nil {
		return false
	}
	if pos > uint64(len(r.buf)) || n > uint64(len(r.buf))-pos {
		r.failf("an offset (%d) runs past its end", pos)
		return false
	}
	return true
}

func (r *reader) u32(pos uint64) uint64 {
	if !r.in(pos, 4) {
		return 0
	}
	return uint64(binary.LittleEndian.Uint32(r.buf[pos:]))
}

func (r *reader) u16(pos uint64) uint64 {
	if !r.in(pos, 2) {
		return 0
	}
	return uint64(binary.LittleEndian.Uint16(r.buf[pos:]))
}

// table is a table at pos: its position and its vtable's.
type table struct{ pos, vtable, vtsize uint64 }

func (r *reader) table(pos uint64) table {
	soff := int64(int32(r.u32(pos)))
	vt := int64(pos) - soff
	if r.err != nil || vt < 0 {
		r.failf("a table's vtable lies before its start")
		return table{}
	}
	return table{pos: pos, vtable: uint64(vt), vtsize: r.u16(uint64(vt))}
}

// slot is where field i of t is stored, 0 when it is absent.
func (r *reader) slot(t table, i uint64) uint64 {
	if r.err != nil || 4+2*i+2 > t.vtsize {
		return 0
	}
	off := r.u16(t.vtable + 4 + 2*i)
	if off == 0 {
		return 0
	}
	return t.pos + off
}

func (r *reader) uint8(t table, i uint64, def uint8) uint8 {
	p := r.slot(t, i)
	if p == 0 || !r.in(p, 1) {
		return def
	}
	return r.buf[p]
}

func (r *reader) int16(t table, i uint64, def int16) int16 {
	p := r.slot(t, i)
	if p == 0 {
		return def
	}
	return int16(r.u16(p))
}

func (r *reader) int32(t table, i uint64, def int32) int32 {
	p := r.slot(t, i)
	if p == 0 {
		return def
	}
	return int32(r.u32(p))
}

// ref follows field i of t, an offset, to what it points at; 0 is absent.
func (r *reader) ref(t table, i uint64) uint64 {
	p := r.slot(t, i)
	if p == 0 {
		return 0
	}
	return p + r.u32(p)
}

func (r *reader) str(pos uint64) string {
	if pos == 0 {
		return ""
	}
	n := r.u32(pos)
	if !r.in(pos+4, n) {
		return ""
	}
	return string(r.buf[pos+4 : pos+4+n])
}

// vector is the positions of the tables a vector of offsets at pos points to.
func (r *reader) vector(pos uint64) []uint64 {
	if pos == 0 {
		return nil
	}
	n := r.u32(pos)
	if !r.in(pos+4, 4*n) {
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		e := pos + 4 + 4*uint64(i)
		out[i] = e + r.u32(e)
	}
	return out
}

func (r *reader) keyValues(t table, i uint64) []KeyValue {
	var out []KeyValue
	for _, p := range r.vector(r.ref(t, i)) {
		kv := r.table(p)
		out = append(out, KeyValue{Key: r.str(r.ref(kv, 0)), Value: r.str(r.ref(kv, 1))})
	}
	return out
}

func (r *reader) field(pos uint64, depth int) Field {
	if r.fields++; depth > maxNesting || r.fields > maxFields {
		r.failf("it has more than %d fields or nests them deeper than %d", maxFields, maxNesting)
		return Field{}
	}
	t := r.table(pos)
	f := Field{
		Name:     r.str(r.ref(t, 0)),
		Nullable: r.uint8(t, 1, 0) != 0,
		Metadata: r.keyValues(t, 6),
	}
	f.Type.tag = r.uint8(t, 2, 0)
	if r.slot(t, 4) != 0 {
		r.failf("field %q is dictionary-encoded", f.Name)
	}
	if ref := r.ref(t, 3); ref != 0 {
		typ := r.table(ref)
		switch f.Type.tag {
		case tagInt:
			f.Type.bitWidth = r.int32(typ, 0, 0)
			f.Type.signed = r.uint8(typ, 1, 0) != 0
		case tagFloatingPoint:
			f.Type.precision = r.int16(typ, 0, 0)
		case tagFixedSizeList:
			f.Type.listSize = r.int32(typ, 0, 0)
		}
	}
	for _, c := range r.vector(r.ref(t, 5)) {
		f.Children = append(f.Children, r.field(c, depth+1))
	}
	return f
}
