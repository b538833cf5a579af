package dataset

import (
	"encoding/base64"
	"fmt"

	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
)

// arrowSchemaKey is the key-value entry holding the Arrow schema. pyarrow
// and HF datasets take a file's column types from it: without it, weights
// and all_layer_means read as plain nested lists and final_means as a
// variable-length list instead of datasets' Array3D/Array2D extension types
// and a fixed_size_list.
const arrowSchemaKey = "ARROW:schema"

// arrowSchema is the base64 Arrow IPC schema message pyarrow 24 writes for
// datasets' features of width w and depth d: every field and list item
// nullable, list children named "item", the huggingface text as schema
// metadata, weights and all_layer_means as datasets' extension types over
// their list storage.
func arrowSchema(w, d int) string {
	return base64.StdEncoding.EncodeToString(arrowSchemaMessage(w, d))
}

// arrowSchemaMessage is arrowSchema's message before base64. It is also
// the schema that datasets' ArrowWriter opens a save_to_disk stream with:
// the features' Arrow types and the same huggingface metadata.
func arrowSchemaMessage(w, d int) []byte {
	item := arrowipc.Field{Name: "item", Type: arrowipc.Float32, Nullable: true}
	lists := func(n int) arrowipc.Field {
		f := item
		for range n {
			f = arrowipc.Field{Name: "item", Type: arrowipc.List, Nullable: true, Children: []arrowipc.Field{f}}
		}
		return f
	}
	// pyarrow keeps an extension type's two entries in a hash map; the
	// order is the one its files have.
	extension := func(name, shape string) []arrowipc.KeyValue {
		return []arrowipc.KeyValue{
			{Key: "ARROW:extension:metadata", Value: fmt.Sprintf(`[%s, "float32"]`, shape)},
			{Key: "ARROW:extension:name", Value: "datasets.features.features." + name},
		}
	}
	weights := lists(3)
	weights.Name = columns[colWeights].name
	weights.Metadata = extension("Array3DExtensionType", fmt.Sprintf("[%d, %d, %d]", d, w, w))
	means := lists(2)
	means.Name = columns[colLayerMeans].name
	means.Metadata = extension("Array2DExtensionType", fmt.Sprintf("[%d, %d]", d, w))
	scalar := func(col int, t arrowipc.Type) arrowipc.Field {
		return arrowipc.Field{Name: columns[col].name, Type: t, Nullable: true}
	}
	fields := []arrowipc.Field{
		scalar(colMLPID, arrowipc.Int32),
		scalar(colName, arrowipc.Utf8),
		scalar(colSeed, arrowipc.Int64),
		weights,
		means,
		{Name: columns[colFinalMeans].name, Type: arrowipc.FixedSizeList(int32(w)), Nullable: true, Children: []arrowipc.Field{item}},
		scalar(colAvgVariance, arrowipc.Float64),
		scalar(colBreakdown, arrowipc.Utf8),
	}
	return arrowipc.SchemaMessage(fields, []arrowipc.KeyValue{{Key: hfMetadataKey, Value: featuresJSON(w, d)}})
}
