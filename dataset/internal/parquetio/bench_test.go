package parquetio

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// 256×8 is the smallest production shape; 1024×16 (67 MB of weights per
// row) the largest. Benchmarks run only under -bench, never in plain go test.
var (
	benchShape      = bakeapi.Spec{Width: 256, Depth: 8}
	benchLargeShape = bakeapi.Spec{Width: 1024, Depth: 16}
)

func BenchmarkWriteParquetRow(b *testing.B)        { benchWrite(b, benchShape, 4) }
func BenchmarkWriteParquetRow1024x16(b *testing.B) { benchWrite(b, benchLargeShape, 2) }

// The largest shape's byte identity with parquet-go is checked here rather
// than in go test: the reference writer takes seconds and gigabytes for it.
func BenchmarkWriteMatchesParquetGo1024x16(b *testing.B) {
	rows := schematest.Rows(benchLargeShape, 0, 2)
	for range b.N {
		checkMatchesOracle(b, benchLargeShape, rows)
	}
}

func BenchmarkReadParquetRow(b *testing.B)        { benchRead(b, benchShape, 8) }
func BenchmarkReadParquetRow1024x16(b *testing.B) { benchRead(b, benchLargeShape, 2) }

// benchWrite reports the float payload per row written; n distinct rows
// are cycled so a row group is never one repeated row.
func benchWrite(b *testing.B, shape bakeapi.Spec, n int) {
	rows := schematest.Rows(shape, 0, n)
	pw, err := NewWriter(io.Discard, shape)
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
	if err := pw.Close(); err != nil {
		b.Fatal(err)
	}
}

// benchRead reads a whole file of n rows per iteration.
func benchRead(b *testing.B, shape bakeapi.Spec, n int) {
	var buf bytes.Buffer
	if err := Write(&buf, shape, schematest.Rows(shape, 0, n)); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "x.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	buf = bytes.Buffer{}
	b.SetBytes(int64(n * 4 * shape.Depth * shape.Width * shape.Width))
	b.ResetTimer()
	for range b.N {
		if err := scanRows(path); err != nil {
			b.Fatal(err)
		}
	}
}

// scanRows reads every row without keeping them, as merge does.
func scanRows(path string) error {
	_, _, err := Scan(path, new(schema.Row), func(schema.Row) error { return nil })
	return err
}
