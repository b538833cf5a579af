package arrowipc

import "encoding/binary"

// FieldNode is one field's entry in a record batch, in the pre-order of the
// schema's fields and their children.
type FieldNode struct{ Length, NullCount int64 }

// Alignment is the multiple of bytes every body buffer is padded to, as
// Arrow's IPC writers do.
const Alignment = 8

// Padded is n rounded up to Alignment.
func Padded(n int64) int64 { return (n + Alignment - 1) &^ (Alignment - 1) }

// RecordBatchMessage returns the encapsulated IPC message of a record batch
// of length rows whose fields are nodes and whose body holds buffers of the
// given byte lengths, in order, each starting at a multiple of Alignment as
// Padded rounds it. The body, bodyLength bytes, follows the message uncompressed.
func RecordBatchMessage(
	length int64,
	nodes []FieldNode,
	bufferLens []int64,
) (msg []byte, bodyLength int64) {
	b := &builder{minAlign: 1}
	bufs := make([][2]int64, len(bufferLens))
	for i, n := range bufferLens {
		bufs[i] = [2]int64{bodyLength, n}
		bodyLength += Padded(n)
	}
	pairs := make([][2]int64, len(nodes))
	for i, n := range nodes {
		pairs[i] = [2]int64{n.Length, n.NullCount}
	}
	bufVec := b.createStructPairs(bufs)
	nodeVec := b.createStructPairs(pairs)
	// RecordBatch: length, nodes, buffers, and no compression.
	b.startTable()
	b.addInt64(0, length)
	b.addOffset(2, bufVec)
	b.addOffset(1, nodeVec)
	batch := b.endTable()
	// Message: version, header_type, header, bodyLength, custom_metadata.
	b.startTable()
	b.addInt64(3, bodyLength)
	b.addOffset(2, batch)
	b.addInt16(0, 4, 0) // MetadataVersion V5
	b.addUint8(1, 3, 0) // MessageHeader RecordBatch
	return encapsulate(b.finish(b.endTable())), bodyLength
}

// EndOfStream is the marker that ends an IPC stream: the continuation
// token and a zero length.
func EndOfStream() []byte { return []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0} }

// encapsulate frames a Message flatbuffer: the continuation marker
// 0xFFFFFFFF, the flatbuffer's length padded so that the message ends at a
// multiple of 8 bytes, the flatbuffer, zero padding.
func encapsulate(fb []byte) []byte {
	const prefix = 8
	padded := (prefix + len(fb) + 7) &^ 7
	out := make([]byte, padded)
	binary.LittleEndian.PutUint32(out, 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(out[4:], uint32(padded-prefix))
	copy(out[prefix:], fb)
	return out
}

// createStructPairs writes a vector of 16-byte structs of two int64 fields,
// as FieldNode and Buffer both are, 8-byte aligned.
func (b *builder) createStructPairs(v [][2]int64) int {
	n := 16 * len(v)
	b.preAlign(n, 4)
	b.preAlign(n, 8)
	for i := len(v) - 1; i >= 0; i-- {
		s := b.push(16)
		binary.LittleEndian.PutUint64(s, uint64(v[i][0]))
		binary.LittleEndian.PutUint64(s[8:], uint64(v[i][1]))
	}
	return b.pushUint32(uint32(len(v)))
}

func (b *builder) addInt64(slot int, v int64) {
	if v == 0 {
		return
	}
	b.align(8)
	binary.LittleEndian.PutUint64(b.push(8), uint64(v))
	b.track(slot)
}
