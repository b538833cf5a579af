package dataset

import (
	"io"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/breakdown"
	"github.com/whestbake/whestbake/dataset/internal/parquetio"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// Row is one MLP: one parquet row, a field a column of Columns. Arrays are
// flattened row-major: Weights[l*W*W + i*W + j] is layer l's weight from
// input i to output j, as the network computes h_l = relu(h_{l-1} @ W_l),
// and LayerMeans[l*W + j] the mean of neuron j after layer l.
type Row = schema.Row

// Column is one column of a row: its name, its type and shape, and its
// field of a Row. It is schema.Column.
type Column = schema.Column

// Columns is the one table of a row's columns, in whestbench's order, by
// their Col* index. It is schema.Columns.
var Columns = &schema.Columns

// The columns' indexes in Columns.
const (
	ColMLPID       = schema.ColMLPID
	ColName        = schema.ColName
	ColSeed        = schema.ColSeed
	ColWeights     = schema.ColWeights
	ColLayerMeans  = schema.ColLayerMeans
	ColFinalMeans  = schema.ColFinalMeans
	ColAvgVariance = schema.ColAvgVariance
	ColBreakdown   = schema.ColBreakdown
)

// MaxAvgVariance bounds avg_variance: a variance of float32 values, which
// lie within ±math.MaxFloat32, is at most MaxFloat32². Readers refuse a
// row beyond it.
const MaxAvgVariance = schema.MaxAvgVariance

// RowBytes is the in-memory size of one Row of spec's shape: its float
// arrays, as the names and the breakdown text are small.
func RowBytes(spec bakeapi.Spec) int64 { return schema.RowBytes(spec) }

// WriterBytes is what a ParquetWriter of spec's shape holds beside the
// rows it is given.
func WriterBytes(spec bakeapi.Spec) int64 { return parquetio.WriterBytes(spec) }

// ParquetReader streams the rows of one whestbench parquet file, checking
// each against the shape the file declares. It is parquetio.Reader.
type ParquetReader = parquetio.Reader

// ParquetWriter streams rows of one shape into a whestbench parquet file,
// holding at most one row group. It is parquetio.Writer.
type ParquetWriter = parquetio.Writer

// OpenParquet opens path and checks its footer, its column layout and its
// huggingface features. Rows are read by Next.
func OpenParquet(path string) (*ParquetReader, error) { return parquetio.Open(path) }

// NewParquetWriter starts a file of rows of spec's width and depth on out.
// Close must be called to write the footer; a file without it is
// unreadable.
func NewParquetWriter(out io.Writer, spec bakeapi.Spec) (*ParquetWriter, error) {
	return parquetio.NewWriter(out, spec)
}

// ReadParquet reads a whole whestbench parquet file. Width and depth come
// from the file's huggingface features and every row is checked against them.
func ReadParquet(path string) (width, depth int, rows []Row, err error) {
	return parquetio.Read(path)
}

// WriteParquet writes rows as one whestbench parquet file. Equal width,
// depth and rows give byte-identical output.
func WriteParquet(w io.Writer, spec bakeapi.Spec, rows []Row) error {
	return parquetio.Write(w, spec, rows)
}

// BreakdownOption adjusts Breakdown.
type BreakdownOption = breakdown.Option

// FlopBudget records the budget the bake ran under. Without it the budget
// is recorded equal to flops_used, as for an unbudgeted reference bake; an
// overrun shows as a negative flops_remaining.
func FlopBudget(b int64) BreakdownOption { return breakdown.FlopBudget(b) }

// Breakdown returns the sampling_budget_breakdown JSON text of one row:
// whestbench's closed-form FLOP model of its sampler, with the bake's wall
// time, as breakdown.Text gives it. width, depth, nSamples and chunk must be
// positive; Breakdown panics otherwise, since that is a caller bug, not a
// data condition.
func Breakdown(
	width, depth int,
	nSamples int64,
	chunk int,
	wallTimeS float64,
	opts ...BreakdownOption,
) string {
	return breakdown.Text(width, depth, nSamples, chunk, wallTimeS, opts...)
}
