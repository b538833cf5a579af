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
		{"features Array3D → Array2D", schema.HFMetadataKey, strings.Replace(features, `"_type": "Array3D"`, `"_type": "Array2D"`, 1),
			[]string{"feature weights is", `"Array2D"`, `expected {"shape": [2, 3, 3], "dtype": "float32", "_type": "Array3D"}`}},
		{"features float32 → float16", schema.HFMetadataKey, strings.Replace(features, `"shape": [2, 3], "dtype": "float32"`, `"shape": [2, 3], "dtype": "float16"`, 1),
			[]string{"feature all_layer_means is", "float16"}},
		{"features re-spaced", schema.HFMetadataKey, strings.ReplaceAll(features, ": ", ":"), []string{"expected exactly"}},
		{"schema Array3D → Array2D", schema.ArrowSchemaKey, editSchema("Array3DExtensionType", "Array2DExtensionType"),
			[]string{schema.ArrowSchemaKey, "field weights has metadata", "Array2DExtensionType", "other column types"}},
		{"schema float32 → float16", schema.ArrowSchemaKey, editSchema(`"float32"]`, `"float16"]`),
			[]string{schema.ArrowSchemaKey, "has metadata {ARROW:extension:metadata=", `"float16"]`}},
		{"schema of another width", schema.ArrowSchemaKey, schema.ArrowSchema(4, 2), []string{"field weights has metadata", "[2, 4, 4]"}},
		{"schema with a float leaf as double", schema.ArrowSchemaKey, retyped(t, 3, 2), []string{"field final_means.item is double, expected float"}},
		{"schema not a message", schema.ArrowSchemaKey, base64.StdEncoding.EncodeToString([]byte("not arrow")), []string{schema.ArrowSchemaKey, "not an Arrow IPC schema message"}},
		{"schema not base64", schema.ArrowSchemaKey, "not base64!", []string{schema.ArrowSchemaKey, "not base64"}},
		{"schema missing", schema.ArrowSchemaKey, "", []string{"no \"ARROW:schema\""}},
	} {
		path := filepath.Join(dir, strings.NewReplacer(" ", "_", "→", "to").Replace(c.name)+".parquet")
		if err := os.WriteFile(path, withKeyValue(t, file, c.key, c.value), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if err == nil {
			t.Errorf("%s: the file was accepted", c.name)
			continue
		}
		schematest.WantErr[*schema.InvalidDatasetError](t, err, append([]string{path}, c.want...)...)
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
	for name, data := range map[string][]byte{"as-written": file, "reordered": withKeyValue(t, file, schema.ArrowSchemaKey, reordered)} {
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
	fields[colFinalMeans].Children[0].Type = arrowipc.Float64
	return base64.StdEncoding.EncodeToString(arrowipc.SchemaMessage(fields, metadata))
}
