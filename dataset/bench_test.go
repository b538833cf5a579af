package dataset

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Production MLPs are 1024×16 (67 MB of weights); 256×8 keeps the
// benchmark quick while exercising the same per-value path.
var benchShape = Shape{Width: 256, Depth: 8}

func BenchmarkWriteParquetRow(b *testing.B) {
	rows := testRows(benchShape, 0, 4)
	pw, err := NewParquetWriter(io.Discard, benchShape)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(4 * len(rows[0].Weights)))
	b.ResetTimer()
	for i := range b.N {
		if err := pw.Write(rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := pw.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkReadParquetRow(b *testing.B) {
	var buf bytes.Buffer
	if err := WriteParquet(&buf, benchShape, testRows(benchShape, 0, 8)); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "x.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * 4 * benchShape.Depth * benchShape.Width * benchShape.Width))
	b.ResetTimer()
	for range b.N {
		if _, _, err := ReadParquet(path); err != nil {
			b.Fatal(err)
		}
	}
}
