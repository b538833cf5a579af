package dataset

import (
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/whestbake/whestbake/bakeapi"
)

// writeParquetOracle writes rows the way ParquetWriter did before it encoded
// the float-list pages itself: every value goes through parquet-go's column
// writers. It is kept as the byte-for-byte reference for the spliced writer.
func writeParquetOracle(out io.Writer, shape bakeapi.Spec, rows []Row) error {
	width, depth := shape.Width, shape.Depth
	cfg, err := writerConfig(width, depth)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[any](out, cfg)
	perGroup := rowsPerGroup(width, depth)
	var reps [numColumns][]byte
	for col, strides := range listStrides(width) {
		if strides != nil {
			reps[col] = repPattern(listLen(col, width, depth), strides)
		}
	}
	var vals []parquet.Value
	for i := range rows {
		cols := w.ColumnWriters()
		for col := range numColumns {
			if reps[col] != nil {
				vals = oracleList(vals[:0], listOf(&rows[i], col), reps[col], col)
			} else {
				vals = append(vals[:0], scalarValue(&rows[i], col))
			}
			if _, err := cols[col].WriteRowValues(vals); err != nil {
				return err
			}
		}
		if int64(i+1)%perGroup == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

func oracleList(dst []parquet.Value, vals []float32, reps []byte, col int) []parquet.Value {
	def := columns[col].maxDef()
	for k, v := range vals {
		dst = append(dst, parquet.FloatValue(v).Level(int(reps[k]), def, col))
	}
	return dst
}
