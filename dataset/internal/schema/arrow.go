package schema

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
)

// ArrowSchemaKey is the key-value entry holding the Arrow schema. pyarrow
// and HF datasets take a file's column types from it: without it, weights
// and all_layer_means read as plain nested lists and final_means as a
// variable-length list instead of datasets' Array3D/Array2D extension types
// and a fixed_size_list.
const ArrowSchemaKey = "ARROW:schema"

// ArrowSchema is the base64 Arrow IPC schema message pyarrow 24 writes for
// datasets' features of width w and depth d, from ArrowFields.
func ArrowSchema(w, d int) string {
	return base64.StdEncoding.EncodeToString(ArrowSchemaMessage(w, d))
}

// ArrowSchemaMessage is ArrowSchema's message before base64. It is also
// the schema that datasets' ArrowWriter opens a save_to_disk stream with:
// the features' Arrow types and the same huggingface metadata.
func ArrowSchemaMessage(w, d int) []byte {
	fields, metadata := ArrowFields(w, d)
	return arrowipc.SchemaMessage(fields, metadata)
}

// ArrowFields are the Arrow schema's fields and metadata for width w and
// depth d, a field a column: every field and list item nullable, list
// children named "item", the huggingface text as schema metadata, an
// array of one dimension as a fixed_size_list, one of more as datasets'
// extension type over its list storage, _ArrayXDExtensionType in
// datasets/features/features.py.
func ArrowFields(w, d int) ([]arrowipc.Field, []arrowipc.KeyValue) {
	fields := make([]arrowipc.Field, NumColumns)
	for i := range Columns {
		fields[i] = arrowField(&Columns[i], w, d)
	}
	return fields, []arrowipc.KeyValue{{Key: HFMetadataKey, Value: FeaturesJSON(w, d)}}
}

// arrowField is column c's field for width w and depth d.
func arrowField(c *Column, w, d int) arrowipc.Field {
	if !c.Array() {
		return arrowipc.Field{Name: c.Name, Type: arrowScalar[c.Type], Nullable: true}
	}
	f := arrowipc.Field{Name: "item", Type: arrowScalar[c.Type], Nullable: true}
	dims := c.Dims(w, d)
	if len(dims) == 1 {
		return arrowipc.Field{
			Name:     c.Name,
			Type:     arrowipc.FixedSizeList(int32(dims[0])),
			Nullable: true,
			Children: []arrowipc.Field{f},
		}
	}
	for range dims {
		f = arrowipc.Field{Name: "item", Type: arrowipc.List, Nullable: true, Children: []arrowipc.Field{f}}
	}
	f.Name = c.Name
	// pyarrow keeps an extension type's two entries in a hash map; the
	// order is the one its files have.
	f.Metadata = []arrowipc.KeyValue{
		{Key: "ARROW:extension:metadata", Value: fmt.Sprintf(`[%s, "%s"]`, shapeText(dims), c.Type)},
		{Key: "ARROW:extension:name", Value: fmt.Sprintf(
			"datasets.features.features.Array%dDExtensionType", len(dims))},
	}
	return f
}

// arrowScalar is the Arrow type of a scalar, or an array's element, of
// each Type.
var arrowScalar = [...]arrowipc.Type{
	Int32:   arrowipc.Int32,
	Int64:   arrowipc.Int64,
	Float32: arrowipc.Float32,
	Float64: arrowipc.Float64,
	String:  arrowipc.Utf8,
}

// shapeText is dims as Python prints a tuple's items in a list: [2, 4, 4].
func shapeText(dims []int) string {
	parts := make([]string, len(dims))
	for i, n := range dims {
		parts[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// CheckTypeMetadata checks a footer's huggingface features text and its
// ARROW:schema against exactly what whestbake, and datasets with pyarrow,
// write for the shape the features declare: the text byte for byte, the
// schema as pyarrow decodes it, with every field's name, type, nullability,
// children and metadata, and the schema's metadata. Readers build the
// column types from these two entries, not from the parquet schema: a file
// whose features say Array2D or float16, or whose Arrow schema does, loads
// as something else in datasets or pyarrow while its pages read the same
// here.
func CheckTypeMetadata(lookup func(key string) (string, bool), w, d int) error {
	text, _ := lookup(HFMetadataKey)
	if want := FeaturesJSON(w, d); text != want {
		return fmt.Errorf("its %q features are not the ones datasets writes "+
			"for width %d, depth %d: %s",
			HFMetadataKey, w, d, featuresDiff(text, want))
	}
	encoded, ok := lookup(ArrowSchemaKey)
	if !ok {
		return fmt.Errorf("it has no %q key-value metadata, "+
			"so pyarrow reads its arrays as plain lists", ArrowSchemaKey)
	}
	msg, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return fmt.Errorf("its %q is not base64: %v", ArrowSchemaKey, err)
	}
	fields, metadata, err := arrowipc.ParseSchemaMessage(msg)
	if err != nil {
		return fmt.Errorf("its %q is not an Arrow IPC schema message pyarrow reads: %v",
			ArrowSchemaKey, err)
	}
	wantFields, wantMetadata := ArrowFields(w, d)
	diff := fieldsDiff("", fields, wantFields)
	if diff == "" && !sameKeyValues(metadata, wantMetadata) {
		diff = "the schema's metadata is not the features text alone"
	}
	if diff != "" {
		return fmt.Errorf("its %q differs from the schema pyarrow writes for width %d, depth %d: "+
			"%s; pyarrow and datasets would read other column types",
			ArrowSchemaKey, w, d, diff)
	}
	return nil
}

// ArrowFieldsDiff describes the first difference between fields, as
// arrowipc decodes them, and the Arrow schema's fields for width w and
// depth d from ArrowFields: a name, a type, a nullability or a field's
// metadata, compared as pyarrow reads them. It is "" when they are equal.
func ArrowFieldsDiff(fields []arrowipc.Field, w, d int) string {
	want, _ := ArrowFields(w, d)
	return fieldsDiff("", fields, want)
}

// fieldsDiff describes the first difference between the fields got and
// want under parent, "" at the top, or is "".
func fieldsDiff(parent string, got, want []arrowipc.Field) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%s has %d fields, expected %d",
			cmp.Or(parent, "the schema"), len(got), len(want))
	}
	for i, g := range got {
		x := want[i]
		at := x.Name
		if parent != "" {
			at = parent + "." + x.Name
		}
		switch {
		case g.Name != x.Name:
			return fmt.Sprintf("field %d of %s is named %q, expected %q",
				i, cmp.Or(parent, "the schema"), g.Name, x.Name)
		case g.Type != x.Type:
			return fmt.Sprintf("field %s is %s, expected %s", at, g.Type, x.Type)
		case g.Nullable != x.Nullable:
			return fmt.Sprintf("field %s has nullable=%v, expected %v", at, g.Nullable, x.Nullable)
		case !sameKeyValues(g.Metadata, x.Metadata):
			return fmt.Sprintf("field %s has metadata %s, expected %s",
				at, keyValuesText(g.Metadata), keyValuesText(x.Metadata))
		}
		if diff := fieldsDiff(at, g.Children, x.Children); diff != "" {
			return diff
		}
	}
	return ""
}

// sameKeyValues compares metadata as pyarrow reads it, a map: pyarrow
// keeps an extension type's entries in a hash map, whose order may differ
// between versions.
func sameKeyValues(a, b []arrowipc.KeyValue) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[string]string, len(a))
	for _, kv := range a {
		m[kv.Key] = kv.Value
	}
	for _, kv := range b {
		if v, ok := m[kv.Key]; !ok || v != kv.Value {
			return false
		}
	}
	return len(m) == len(b)
}

func keyValuesText(kvs []arrowipc.KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = kv.Key + "=" + kv.Value
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
