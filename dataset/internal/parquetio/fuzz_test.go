package parquetio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// FuzzOpenParquet reads mutated parquet files. A damaged file must give an
// *schema.InvalidDatasetError, never a panic or a hang, and may not cost memory
// out of proportion to its size whatever its headers claim; a file that
// reads must deliver the footer's row count with every array of the
// declared shape.
func FuzzOpenParquet(f *testing.F) {
	shape := bakeapi.Spec{Width: 2, Depth: 1}
	var buf bytes.Buffer
	if err := Write(&buf, shape, schematest.Rows(shape, 0, 2)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	fixture, err := os.ReadFile(singleSplitShard)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		readAllRows(t, path)
		runtime.ReadMemStats(&after)
		// Reading a sound file allocates about ten times its size.
		got := after.TotalAlloc - before.TotalAlloc
		if limit := uint64(64<<20 + 64*len(data)); got > limit {
			t.Fatalf("reading %d bytes allocated %d MiB", len(data), got>>20)
		}
	})
}

func readAllRows(t *testing.T, path string) {
	r, err := Open(path)
	if err != nil {
		wantInvalid(t, err)
		return
	}
	defer r.Close()
	w, d := r.Width(), r.Depth()
	for n := int64(0); ; n++ {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			if n != r.NumRows() {
				t.Fatalf("read %d rows, footer says %d", n, r.NumRows())
			}
			return
		}
		if err != nil {
			wantInvalid(t, err)
			return
		}
		if len(row.Weights) != d*w*w || len(row.LayerMeans) != d*w || len(row.FinalMeans) != w {
			t.Fatalf("row %d has %d/%d/%d values for width %d depth %d",
				n, len(row.Weights), len(row.LayerMeans), len(row.FinalMeans), w, d)
		}
	}
}

func wantInvalid(t *testing.T, err error) {
	t.Helper()
	var invalid *schema.InvalidDatasetError
	if !errors.As(err, &invalid) {
		t.Fatalf("got %v (%T), want an *schema.InvalidDatasetError", err, err)
	}
}

// withFeatures returns file with its huggingface key-value text replaced.
func withFeatures(t testing.TB, file []byte, text string) []byte {
	t.Helper()
	return withKeyValue(t, file, schema.HFMetadataKey, text)
}

// withKeyValue returns file with the footer's key-value entry key set to
// text ("" removes it).
func withKeyValue(t testing.TB, file []byte, key, text string) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	start := len(file) - 8 - n
	var meta format.FileMetaData
	footer := file[start : start+n]
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &meta); err != nil {
		t.Fatal(err)
	}
	isKey := func(kv format.KeyValue) bool { return kv.Key == key }
	i := slices.IndexFunc(meta.KeyValueMetadata, isKey)
	switch {
	case i < 0:
		t.Fatalf("no %s key-value metadata to replace", key)
	case text == "":
		meta.KeyValueMetadata = slices.Delete(meta.KeyValueMetadata, i, i+1)
	default:
		meta.KeyValueMetadata[i].Value = text
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &meta)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(file[:start]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, parquetMagic...)
}

// A file whose features claim a shape far beyond its data used to have
// buffers sized from the claim, a quarter of a terabyte before reading a
// row: the footer's value counts must now agree with it, and a file without
// rows never sizes anything by it.
func TestReadRejectsShapeTheFileDoesNotHold(t *testing.T) {
	shape, huge := bakeapi.Spec{Width: 2, Depth: 1}, schema.FeaturesJSON(1<<14, 1<<10)
	dir := t.TempDir()
	write := func(name string, rows []schema.Row) string {
		var buf bytes.Buffer
		if err := Write(&buf, shape, rows); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, withFeatures(t, buf.Bytes(), huge), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write("huge.parquet", schematest.Rows(shape, 0, 2))
	_, err := Open(path)
	schematest.WantErr[*schema.InvalidDatasetError](t, err, path, "weights", "holds 8 values")

	// Without rows the values cannot contradict the claim, but the Arrow
	// schema (of the real shape) does.
	path = write("empty.parquet", nil)
	_, err = Open(path)
	schematest.WantErr[*schema.InvalidDatasetError](t, err, path, schema.ArrowSchemaKey)
}
