package arrowipc

import "encoding/binary"

// builder is the part of flatbuffers' C++ FlatBufferBuilder that Arrow's
// schema serialisation uses, with the same byte-level behaviour: the buffer
// grows downward, scalars are aligned to their size, a vtable equal byte for
// byte to an earlier one is shared, and fields at their default value are
// not written.
//
// The Go flatbuffers builder is not a substitute: it shares vtables whose
// field offsets match even when the recorded object sizes differ, as for an
// Arrow FloatingPoint and a FixedSizeList table, where the
// C++ builder compares the whole vtable, so its bytes differ from Arrow
// C++'s.
type builder struct {
	buf      []byte // buf[len(buf)-size:] is the data written so far
	size     int
	minAlign int
	vtables  []int   // offsets of the vtables written, as the buffer's size at their creation
	fields   []field // fields of the table being built
	maxVOff  int
	start    int // size when the current table started
}

type field struct {
	voff int // vtable slot, 4 + 2·index
	off  int // size after the field's value was written
}

func (b *builder) grow(n int) {
	if len(b.buf)-b.size >= n {
		return
	}
	nb := make([]byte, 2*len(b.buf)+n)
	copy(nb[len(nb)-b.size:], b.buf[len(b.buf)-b.size:])
	b.buf = nb
}

// push reserves n zero bytes below the data and returns them.
func (b *builder) push(n int) []byte {
	b.grow(n)
	b.size += n
	at := len(b.buf) - b.size
	clear(b.buf[at : at+n])
	return b.buf[at : at+n]
}

func (b *builder) trackAlign(n int) { b.minAlign = max(b.minAlign, n) }

// align pads so that the next n-byte scalar is n-aligned, as C++ Align does.
func (b *builder) align(n int) {
	b.trackAlign(n)
	b.push(padding(b.size, n))
}

// preAlign pads so that after len more bytes the data is aligned to n, as
// C++ PreAlign does; nothing is done for len 0.
func (b *builder) preAlign(len, n int) {
	if len == 0 {
		return
	}
	b.trackAlign(n)
	b.push(padding(b.size+len, n))
}

func padding(size, n int) int { return -size & (n - 1) }

func (b *builder) pushUint32(v uint32) int {
	b.align(4)
	binary.LittleEndian.PutUint32(b.push(4), v)
	return b.size
}

// referTo turns an object's offset into the uoffset stored at the next
// 4-byte slot.
func (b *builder) referTo(off int) uint32 {
	b.align(4)
	return uint32(b.size - off + 4)
}

func (b *builder) createString(s string) int {
	b.preAlign(len(s)+1, 4)
	b.push(1) // the terminating zero
	copy(b.push(len(s)), s)
	return b.pushUint32(uint32(len(s)))
}

// createOffsets writes a vector of offsets to objects such as tables and strings.
func (b *builder) createOffsets(offs []int) int {
	b.preAlign(4*len(offs), 4)
	b.preAlign(4*len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.pushUint32(b.referTo(offs[i]))
	}
	return b.pushUint32(uint32(len(offs)))
}

func (b *builder) startTable() {
	b.fields = b.fields[:0]
	b.maxVOff = 0
	b.start = b.size
}

func (b *builder) track(slot int) {
	voff := 4 + 2*slot
	b.fields = append(b.fields, field{voff, b.size})
	b.maxVOff = max(b.maxVOff, voff)
}

func (b *builder) addOffset(slot, off int) {
	if off == 0 {
		return
	}
	b.pushUint32(b.referTo(off))
	b.track(slot)
}

func (b *builder) addInt32(slot int, v, def int32) {
	if v == def {
		return
	}
	b.pushUint32(uint32(v))
	b.track(slot)
}

func (b *builder) addInt16(slot int, v, def int16) {
	if v == def {
		return
	}
	b.align(2)
	binary.LittleEndian.PutUint16(b.push(2), uint16(v))
	b.track(slot)
}

func (b *builder) addUint8(slot int, v, def uint8) {
	if v == def {
		return
	}
	b.push(1)[0] = v
	b.track(slot)
}

func (b *builder) addBool(slot int, v bool) {
	if v {
		b.addUint8(slot, 1, 0)
	}
}

// endTable writes the table's vtable offset and vtable, or reuses an equal
// earlier vtable, and returns the table's offset.
func (b *builder) endTable() int {
	loc := b.pushUint32(0)
	vsize := max(b.maxVOff+2, 4)
	vt := b.push(vsize)
	binary.LittleEndian.PutUint16(vt, uint16(vsize))
	binary.LittleEndian.PutUint16(vt[2:], uint16(loc-b.start))
	for _, f := range b.fields {
		binary.LittleEndian.PutUint16(vt[f.voff:], uint16(loc-f.off))
	}
	use := b.size
	for _, old := range b.vtables {
		ovt := b.buf[len(b.buf)-old:]
		if int(binary.LittleEndian.Uint16(ovt)) == vsize && string(ovt[:vsize]) == string(vt) {
			use = old
			b.size = loc // drop the new vtable
			break
		}
	}
	if use == b.size {
		b.vtables = append(b.vtables, use)
	}
	at := len(b.buf) - loc
	binary.LittleEndian.PutUint32(b.buf[at:], uint32(int32(use)-int32(loc)))
	return loc
}

// finish writes the root offset and returns the finished flatbuffer.
func (b *builder) finish(root int) []byte {
	b.preAlign(4, b.minAlign)
	b.pushUint32(b.referTo(root))
	return b.buf[len(b.buf)-b.size:]
}
