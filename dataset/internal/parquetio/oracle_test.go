package parquetio

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// writeParquetOracle writes rows the way Writer did before it encoded
// the float-list pages itself: every value goes through parquet-go's column
// writers, and only the footer is rewritten by arrowFooter. It is kept as
// the byte-for-byte reference for the spliced writer.
func writeParquetOracle(out io.Writer, shape bakeapi.Spec, rows []schema.Row) error {
	var file bytes.Buffer
	if err := writeParquetGo(&file, shape, rows); err != nil {
		return err
	}
	b := file.Bytes()
	meta, err := readFooter(b)
	if err != nil {
		return err
	}
	// The string bytes of each row group, which parquet-go leaves at 0 for
	// dictionary-encoded columns and Writer counts.
	per := rowsPerGroup(shape.Width, shape.Depth)
	for i := range meta.RowGroups {
		for _, r := range rows[int64(i)*per : min(int64(i+1)*per, int64(len(rows)))] {
			cols := meta.RowGroups[i].Columns
			names := &cols[schema.ColName].MetaData.SizeStatistics
			names.UnencodedByteArrayDataBytes += int64(len(r.Name))
			breakdowns := &cols[schema.ColBreakdown].MetaData.SizeStatistics
			breakdowns.UnencodedByteArrayDataBytes += int64(len(r.Breakdown))
		}
	}
	arrowFooter(meta, shape.Width, shape.Depth)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), meta)
	if err != nil {
		return err
	}
	n := binary.LittleEndian.Uint32(b[len(b)-8:])
	b = append(b[:len(b)-8-int(n)], footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	_, err = out.Write(append(b, "PAR1"...))
	return err
}

func writeParquetGo(out io.Writer, shape bakeapi.Spec, rows []schema.Row) error {
	width, depth := shape.Width, shape.Depth
	cfg, err := writerConfig(width, depth)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[any](out, cfg)
	perGroup := rowsPerGroup(width, depth)
	var reps [numColumns][]byte
	for col, strides := range listStrides(width, depth) {
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
