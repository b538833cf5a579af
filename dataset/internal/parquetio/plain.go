package parquetio

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// littleEndian is whether float32s sit in memory as parquet's PLAIN
// encoding lays them out, so that a row's arrays can go to and come from
// the file without an encoded copy of their own, which would be 64 MiB at
// width 1024 × depth 16.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes is the memory of v as bytes.
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// plainFloats is v PLAIN-encoded: v's own memory on little-endian machines,
// a copy elsewhere.
func plainFloats(v []float32) []byte {
	if littleEndian {
		return floatBytes(v)
	}
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// fromPlain turns v, whose memory holds PLAIN-encoded floats, into floats
// in place.
func fromPlain(v []float32) {
	if littleEndian {
		return
	}
	b := floatBytes(v)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}
