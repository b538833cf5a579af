package parquetio

import (
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// numColumns is the row's column count, that of schema.Columns.
const numColumns = schema.NumColumns

// columnSpec is one column's physical shape as Arrow writes it in whestbench's
// fixture files, testdata/whestbench-fixtures: every node OPTIONAL, lists in
// the 3-level LIST encoding, an array of n dimensions n lists deep.
type columnSpec struct {
	name      string
	kind      parquet.Kind
	listDepth int // 0 for scalars; leaf max repetition level
}

// columns are schema.Columns' physical shapes, by their Col* index.
var columns = func() (out [numColumns]columnSpec) {
	for i, c := range schema.Columns {
		out[i] = columnSpec{c.Name, parquetKind[c.Type], len(c.Shape)}
	}
	return out
}()

// parquetKind is the physical type of each schema.Type.
var parquetKind = [...]parquet.Kind{
	schema.Int32:   parquet.Int32,
	schema.Int64:   parquet.Int64,
	schema.Float32: parquet.Float,
	schema.Float64: parquet.Double,
	schema.String:  parquet.ByteArray,
}

// leafPath is the column path of spec's leaf: name, then list/element once
// per nesting level.
func (c columnSpec) leafPath() []string {
	p := []string{c.name}
	for range c.listDepth {
		p = append(p, "list", "element")
	}
	return p
}

// maxDef is the leaf's maximum definition level: the optional field itself,
// then a repeated "list" and an optional "element" per level.
func (c columnSpec) maxDef() int { return 1 + 2*c.listDepth }

// rowSchema builds the writer schema. Scalars are dictionary-encoded,
// RLE_DICTIONARY data pages over a PLAIN dictionary page, and SNAPPY, as
// Arrow writes them; they are tiny and the names and breakdown JSON
// compress well. The float leaves stay UNCOMPRESSED PLAIN like Arrow's:
// random-normal weights and means do not compress, as their mantissa bits are
// noise, and compressing gigabytes of them per file would cost CPU for a
// few percent at best.
func rowSchema() *parquet.Schema {
	fields := make(orderedGroup, numColumns)
	for i, c := range columns {
		var node parquet.Node
		switch c.kind {
		case parquet.Int32:
			node = parquet.Leaf(parquet.Int32Type)
		case parquet.Int64:
			node = parquet.Leaf(parquet.Int64Type)
		case parquet.Double:
			node = parquet.Leaf(parquet.DoubleType)
		case parquet.ByteArray:
			node = parquet.String()
		case parquet.Float:
			node = parquet.Leaf(parquet.FloatType)
		}
		var codec compress.Codec = &parquet.Snappy
		var enc encoding.Encoding = &parquet.RLEDictionary
		if c.listDepth > 0 {
			codec = &parquet.Uncompressed
			enc = &parquet.Plain
		}
		node = parquet.Optional(parquet.Compressed(parquet.Encoded(node, enc), codec))
		for range c.listDepth {
			node = parquet.Optional(parquet.List(node))
		}
		fields[i] = &namedNode{Node: node, name: c.name}
	}
	return parquet.NewSchema("schema", fields)
}

// orderedGroup is a parquet group whose fields keep the order given.
// parquet.Group is a map and sorts its fields by name, which would put
// all_layer_means first.
type orderedGroup []*namedNode

type namedNode struct {
	parquet.Node
	name string
}

func (f *namedNode) Name() string { return f.name }

// Value is part of parquet.Field for reflection-based writes, which this
// package never performs: rows are written as parquet.Row values.
func (f *namedNode) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func (g orderedGroup) ID() int { return 0 }
func (g orderedGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "", g)
	return b.String()
}
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return g.asGroup().GoType() }
func (g orderedGroup) asGroup() parquet.Group {
	m := parquet.Group{}
	for _, f := range g {
		m[f.name] = f.Node
	}
	return m
}
func (g orderedGroup) Fields() []parquet.Field {
	fields := make([]parquet.Field, len(g))
	for i, f := range g {
		fields[i] = f
	}
	return fields
}

// listStrides gives, for each list column, the number of leaf values per
// element at each nesting level of a row of width w and depth d, nil for
// scalars: the product of the dimensions inside that level.
func listStrides(w, d int) [numColumns][]int {
	var out [numColumns][]int
	for i := range schema.Columns {
		dims := schema.Columns[i].Dims(w, d)
		if len(dims) == 0 {
			continue
		}
		out[i] = make([]int, len(dims))
		n := 1
		for k := len(dims) - 1; k >= 0; k-- {
			out[i][k] = n
			n *= dims[k]
		}
	}
	return out
}

// listLen is the number of leaf values of list column col in one row.
func listLen(col, w, d int) int { return schema.Columns[col].Len(w, d) }
