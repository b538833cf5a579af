// Package arrowipc encodes an Arrow IPC Schema message byte for byte as
// Arrow C++, and so pyarrow, does, and decodes one from an untrusted file
// with ParseSchemaMessage. Parquet files written by Arrow carry one,
// base64-encoded, under the key-value entry ARROW:schema, and pyarrow and HF
// datasets build a file's column types from it before anything else. The
// same message opens an IPC stream, which RecordBatchMessage and
// EndOfStream complete, as in the Arrow file of a datasets save_to_disk folder;
// ParseMessage decodes any message of such a stream from an untrusted file.
//
// Only the types whestbench's files use are supported. The order in which
// objects are built follows FieldToFlatbufferVisitor, SchemaToFlatbuffer
// and WriteFBMessage in arrow/ipc/metadata_internal.cc, and the order of
// the fields within a table follows flatc's generated Create* functions:
// largest first, then reverse declaration order. Both decide where each
// byte lands.
package arrowipc

// Type union tags of Schema.fbs.
const (
	tagInt           = 2
	tagFloatingPoint = 3
	tagUtf8          = 5
	tagList          = 12
	tagFixedSizeList = 16
)

// Type is an Arrow data type.
type Type struct {
	tag       uint8
	bitWidth  int32 // Int
	signed    bool  // Int
	precision int16 // FloatingPoint: 0 half, 1 single, 2 double
	listSize  int32 // FixedSizeList
}

// The types whestbench's columns use.
var (
	Int32   = Type{tag: tagInt, bitWidth: 32, signed: true}
	Int64   = Type{tag: tagInt, bitWidth: 64, signed: true}
	Float32 = Type{tag: tagFloatingPoint, precision: 1}
	Float64 = Type{tag: tagFloatingPoint, precision: 2}
	Utf8    = Type{tag: tagUtf8}
	List    = Type{tag: tagList}
)

// FixedSizeList is fixed_size_list<child>[n]; the child is the field's one child.
func FixedSizeList(n int32) Type { return Type{tag: tagFixedSizeList, listSize: n} }

// KeyValue is one custom-metadata entry.
type KeyValue struct{ Key, Value string }

// Field is a schema field. List types have one child. Metadata is written
// in the order given; for an extension type it holds ARROW:extension:name
// and ARROW:extension:metadata in the order Arrow C++ emitted them.
type Field struct {
	Name     string
	Type     Type
	Nullable bool
	Children []Field
	Metadata []KeyValue
}

// SchemaMessage returns the encapsulated IPC message of a schema of fields
// with schema-level metadata: the continuation marker 0xFFFFFFFF, the
// padded flatbuffer length, the Message flatbuffer, zero padding to a
// multiple of 8 bytes. No end-of-stream marker follows; this is what
// arrow::ipc::SerializeSchema returns and parquet stores.
func SchemaMessage(fields []Field, metadata []KeyValue) []byte {
	b := &builder{minAlign: 1}
	offs := make([]int, len(fields))
	for i, f := range fields {
		offs[i] = b.field(f)
	}
	fieldVec := b.createOffsets(offs)
	meta := b.keyValues(metadata)
	// Schema: endianness, left at the default Little, fields, custom_metadata, features.
	b.startTable()
	b.addOffset(2, meta)
	b.addOffset(1, fieldVec)
	schema := b.endTable()
	// Message: version, header_type, header, a bodyLength of 0, custom_metadata.
	b.startTable()
	b.addOffset(2, schema)
	b.addInt16(0, 4, 0) // MetadataVersion V5
	b.addUint8(1, 1, 0) // MessageHeader Schema
	return encapsulate(b.finish(b.endTable()))
}

// field builds f's children first, then its type table, metadata, name and
// children vector, then the Field table.
func (b *builder) field(f Field) int {
	children := make([]int, len(f.Children))
	for i, c := range f.Children {
		children[i] = b.field(c)
	}
	typ := b.typeTable(f.Type)
	meta := b.keyValues(f.Metadata)
	name := b.createString(f.Name)
	childVec := b.createOffsets(children)
	// Field: name, nullable, type_type, type, dictionary, children, custom_metadata.
	b.startTable()
	b.addOffset(6, meta)
	b.addOffset(5, childVec)
	b.addOffset(3, typ)
	b.addOffset(0, name)
	b.addUint8(2, f.Type.tag, 0)
	b.addBool(1, f.Nullable)
	return b.endTable()
}

func (b *builder) typeTable(t Type) int {
	b.startTable()
	switch t.tag {
	case tagInt: // bitWidth, is_signed
		b.addInt32(0, t.bitWidth, 0)
		b.addBool(1, t.signed)
	case tagFloatingPoint: // precision
		b.addInt16(0, t.precision, 0)
	case tagFixedSizeList: // listSize
		b.addInt32(0, t.listSize, 0)
	}
	return b.endTable()
}

// keyValues writes a vector of KeyValue tables, or nothing, offset 0, for
// no entries, as Arrow leaves custom_metadata unset then.
func (b *builder) keyValues(kvs []KeyValue) int {
	if len(kvs) == 0 {
		return 0
	}
	offs := make([]int, len(kvs))
	for i, kv := range kvs {
		k := b.createString(kv.Key)
		v := b.createString(kv.Value)
		// KeyValue: key, value.
		b.startTable()
		b.addOffset(1, v)
		b.addOffset(0, k)
		offs[i] = b.endTable()
	}
	return b.createOffsets(offs)
}
