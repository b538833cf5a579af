package arrowipc

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func testSchema() ([]Field, []KeyValue) {
	item := Field{Name: "item", Type: Float32, Nullable: true}
	list := Field{
		Name:     "weights",
		Type:     List,
		Nullable: true,
		Children: []Field{{
			Name:     "item",
			Type:     List,
			Nullable: true,
			Children: []Field{item},
		}},
		Metadata: []KeyValue{
			{"ARROW:extension:metadata", `[[2, 3], "float32"]`},
			{"ARROW:extension:name", "x.Array2DExtensionType"},
		},
	}
	return []Field{
		{Name: "id", Type: Int32, Nullable: true},
		{Name: "seed", Type: Int64},
		{Name: "name", Type: Utf8, Nullable: true},
		list,
		{
			Name:     "final",
			Type:     FixedSizeList(3),
			Nullable: true,
			Children: []Field{item},
		},
		{Name: "var", Type: Float64, Nullable: true},
	}, []KeyValue{{"huggingface", `{"info": {}}`}}
}

// What SchemaMessage writes decodes to what it was given.
func TestParseSchemaMessageInvertsSchemaMessage(t *testing.T) {
	fields, md := testSchema()
	gotFields, gotMD, err := ParseSchemaMessage(SchemaMessage(fields, md))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotFields, fields) || !reflect.DeepEqual(gotMD, md) {
		t.Errorf("decoded\n%+v %+v\nwant\n%+v %+v", gotFields, gotMD, fields, md)
	}
	half := fields
	half[5].Type = Type{tag: tagFloatingPoint, precision: 0}
	got, _, err := ParseSchemaMessage(SchemaMessage(half, md))
	if err != nil || got[5].Type.String() != "halffloat" {
		t.Errorf("a float16 field decodes as %v (%v)", got[5].Type, err)
	}
}

// A message from a file is untrusted: every truncation and many damaged
// copies give an error or a schema, never a panic.
func TestParseSchemaMessageSurvivesDamage(t *testing.T) {
	fields, md := testSchema()
	msg := SchemaMessage(fields, md)
	for n := range len(msg) {
		if _, _, err := ParseSchemaMessage(msg[:n]); err == nil && n < 16 {
			t.Errorf("a message cut to %d bytes decoded", n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		bad := append([]byte(nil), msg...)
		for range 1 + rng.IntN(4) {
			bad[8+rng.IntN(len(bad)-8)] = byte(rng.Uint32())
		}
		ParseSchemaMessage(bad)
	}
}

// What RecordBatchMessage writes decodes to its length, nodes and buffers,
// uncompressed, each buffer at the padded offset after the one before.
func TestParseMessageInvertsRecordBatchMessage(t *testing.T) {
	nodes := []FieldNode{{Length: 3}, {Length: 6, NullCount: 1}, {Length: 18}}
	lens := []int64{0, 12, 0, 28, 1, 72}
	msg, body := RecordBatchMessage(3, nodes, lens)
	n := int(msg[4]) | int(msg[5])<<8
	m, err := ParseMessage(msg[8 : 8+n])
	if err != nil {
		t.Fatal(err)
	}
	want := []Buffer{{0, 0}, {0, 12}, {16, 0}, {16, 28}, {48, 1}, {56, 72}}
	if m.Header != HeaderRecordBatch || m.BodyLength != body || body != 128 ||
		m.Batch.Length != 3 || !reflect.DeepEqual(m.Batch.Nodes, nodes) ||
		!reflect.DeepEqual(m.Batch.Buffers, want) || m.Batch.Compressed || m.Batch.Variadic != 0 {
		t.Errorf("decoded %+v, body %d", m, body)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		bad := append([]byte(nil), msg[8:8+n]...)
		for range 1 + rng.IntN(4) {
			bad[rng.IntN(len(bad))] = byte(rng.Uint32())
		}
		ParseMessage(bad)
	}
	for k := range n {
		ParseMessage(msg[8 : 8+k])
	}
}
