package parquetio

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// pyarrow and datasets take a file's column types from its footer's
// huggingface features and ARROW:schema, not from the parquet schema: a
// file whose entries were edited (Array3D → Array2D, float32 → float16)
// reads the same pages here but loads as something else there, so it is
// refused, naming the entry and the difference.
func TestReadRefusesEditedTypeMetadata(t *testing.T) {
	shape := bakeapi.Spec{Width: 3, Depth: 2}
	var buf bytes.Buffer
	if err := Write(&buf, shape, schematest.Rows(shape, 0, 2)); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	features := schema.FeaturesJSON(3, 2)
	message, err := base64.StdEncoding.DecodeString(schema.ArrowSchema(3, 2))
	if err != nil {
		t.Fatal(err)
	}
	// The schema message carries the features text too; edit only its
	// own fields (the extension types), as a hand-edited file would.
	editSchema := func(old, new string) string {
		if !bytes.Contains(message, []byte(old)) {
			t.Fatalf("the Arrow schema holds no %q", old)
		}
		at := bytes.LastIndex(message, []byte(old))
		edited := append(append(bytes.Clone(message[:at]), new...), message[at+len(old):]...)
		return base64.StdEncoding.EncodeToString(edited)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, key, value string
		want             []string
	}{
		{
			name: "features Array3D → Array2D",
			key:  schema.HFMetadataKey,
			value: strings.Replace(features,
				`"_type": "Array3D"`, `"_type": "Array2D"`, 1),
			want: []string{
				"feature weights is", `"Array2D"`,
				`expected {"shape": [2, 3, 3], "dtype": "float32", "_type": "Array3D"}`,
			},
		},
		{
			name: "features float32 → float16",
			key:  schema.HFMetadataKey,
			value: strings.Replace(features,
				`"shape": [2, 3], "dtype": "float32"`, `"shape": [2, 3], "dtype": "float16"`, 1),
			want: []string{"feature all_layer_means is", "float16"},
		},
		{
			name:  "features re-spaced",
			key:   schema.HFMetadataKey,
			value: strings.ReplaceAll(features, ": ", ":"),
			want:  []string{"expected exactly"},
		},
		{
			name:  "schema Array3D → Array2D",
			key:   schema.ArrowSchemaKey,
			value: editSchema("Array3DExtensionType", "Array2DExtensionType"),
			want: []string{
				schema.ArrowSchemaKey, "field weights has metadata", "Array2DExtensionType",
				"other column types",
			},
		},
		{
			name:  "schema float32 → float16",
			key:   schema.ArrowSchemaKey,
			value: editSchema(`"float32"]`, `"float16"]`),
			want: []string{
				schema.ArrowSchemaKey, "has metadata {ARROW:extension:metadata=", `"float16"]`,
			},
		},
		{
			name:  "schema of another width",
			key:   schema.ArrowSchemaKey,
			value: schema.ArrowSchema(4, 2),
			want:  []string{"field weights has metadata", "[2, 4, 4]"},
		},
		{
			name:  "schema with a float leaf as double",
			key:   schema.ArrowSchemaKey,
			value: retyped(t, 3, 2),
			want:  []string{"field final_means.item is double, expected float"},
		},
		{
			name:  "schema not a message",
			key:   schema.ArrowSchemaKey,
			value: base64.StdEncoding.EncodeToString([]byte("not arrow")),
			want:  []string{schema.ArrowSchemaKey, "not an Arrow IPC schema message"},
		},
		{
			name:  "schema not base64",
			key:   schema.ArrowSchemaKey,
			value: "not base64!",
			want:  []string{schema.ArrowSchemaKey, "not base64"},
		},
		{
			name:  "schema missing",
			key:   schema.ArrowSchemaKey,
			value: "",
			want:  []string{"no \"ARROW:schema\""},
		},
	} {
		fileName := strings.NewReplacer(" ", "_", "→", "to").Replace(c.name) + ".parquet"
		path := filepath.Join(dir, fileName)
		if err := os.WriteFile(path, withKeyValue(t, file, c.key, c.value), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if err == nil {
			t.Errorf("%s: the file was accepted", c.name)
			continue
		}
		fragments := append([]string{path}, c.want...)
		schematest.WantErr[*schema.InvalidDatasetError](t, err, fragments...)
	}
	// The file as written reads, and so does one whose schema encodes the
	// same schema in other bytes (pyarrow keeps an extension type's two
	// entries in a hash map: another version may write them the other way
	// round).
	fields, metadata := schema.ArrowFields(3, 2)
	for i := range fields {
		slices.Reverse(fields[i].Metadata)
	}
	reordered := base64.StdEncoding.EncodeToString(arrowipc.SchemaMessage(fields, metadata))
	if reordered == schema.ArrowSchema(3, 2) {
		t.Fatal("reordering the metadata did not change the bytes")
	}
	for name, data := range map[string][]byte{
		"as-written": file,
		"reordered":  withKeyValue(t, file, schema.ArrowSchemaKey, reordered),
	} {
		path := filepath.Join(dir, name+".parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := Read(path); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// retyped is the ARROW:schema of width w, depth d with final_means' items
// as double (float64) instead of float.
func retyped(t *testing.T, w, d int) string {
	t.Helper()
	fields, metadata := schema.ArrowFields(w, d)
	fields[schema.ColFinalMeans].Children[0].Type = arrowipc.Float64
	return base64.StdEncoding.EncodeToString(arrowipc.SchemaMessage(fields, metadata))
}
