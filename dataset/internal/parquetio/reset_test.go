package parquetio

import (
	"bytes"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// A Writer Reset after a file (a split's next shard) writes the bytes a
// new Writer writes of the same rows, whether its rows share row groups or
// each is a group of its own, and whether the file before ended on a full
// group or not.
func TestResetWriterWritesTheBytesOfANewOne(t *testing.T) {
	defer func(b int64) { rowGroupFloatBytes = b }(rowGroupFloatBytes)
	for _, c := range []struct {
		name       string
		groupBytes int64
	}{{"rows that share groups", 64 << 20}, {"a group a row", 1}} {
		t.Run(c.name, func(t *testing.T) {
			rowGroupFloatBytes = c.groupBytes
			shape := bakeapi.Spec{Width: 8, Depth: 3}
			before := schematest.Rows(shape, 0, 70)
			rows := schematest.Rows(shape, 70, 5)
			var want bytes.Buffer
			if err := Write(&want, shape, rows); err != nil {
				t.Fatal(err)
			}
			var first, got bytes.Buffer
			pw, err := NewWriter(&first, shape)
			if err != nil {
				t.Fatal(err)
			}
			if err := pw.Write(before...); err != nil {
				t.Fatal(err)
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			pw.Reset(&got)
			if err := pw.Write(rows...); err != nil {
				t.Fatal(err)
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("the file after Reset is %d bytes unlike a new Writer's %d",
					got.Len(), want.Len())
			}
		})
	}
}
