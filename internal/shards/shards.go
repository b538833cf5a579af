// Package shards is the rule that cuts a split of a dataset into the files
// it is written in, data/<split>-NNNNN-of-MMMMM.parquet and
// prepared/<split>/data-NNNNN-of-MMMMM.arrow: no shard larger than
// MaxBytes, and the rows of each shard a function of the split's shape and
// row count alone. Every writer of the same rows therefore cuts them alike,
// be it a bake, a merge of any slicing or a Temporal bake's merge on any
// worker, and a split that fits in one file is one shard.
//
// The datasets library cuts at the same size, datasets.config.MAX_SHARD_SIZE,
// which Dataset.save_to_disk and push_to_hub use, and shares the rows among
// the shards as Dataset.shard(contiguous=True) does in datasets/arrow_dataset.py.
// whestbench reads every shard of a split in name order: whestbench/dataset_io.py
// reads data/<split>-*.parquet with Dataset.from_parquet, and load_from_disk
// reads the shards state.json lists.
package shards

import (
	"fmt"
	"io"
	"math"
	"sync/atomic"
)

// MaxBytes is the largest shard: datasets' MAX_SHARD_SIZE, "500MB", which
// its convert_file_size_to_int reads as 500·10⁶ bytes.
const MaxBytes int64 = 500_000_000

// FileBytes is what a shard holds besides its rows: parquet's magic
// numbers and footer, with the schema, the features and ARROW:schema text,
// and Arrow's schema message and end-of-stream marker, a few KB each.
const FileBytes = 64 << 10

// TextBytes is what a row takes besides 5 bytes a float: its mlp_name and
// sampling_budget_breakdown, about 2.5 KB in a whestbench or whestbake
// row, its Arrow record batch message, and parquet's page headers and
// the footer's entry of its row group with the group's statistics.
const TextBytes = 16 << 10

// MaxCount is the most shards a split may have: the names hold five digits.
const MaxCount = 99_999

// limit is MaxBytes unless a test lowers it with SetLimit.
var limit atomic.Int64

func init() { limit.Store(MaxBytes) }

// Limit is the largest shard the writers make, and what they check each
// shard of more than one row against.
func Limit() int64 { return limit.Load() }

// SetLimit makes Limit n until restore is called. It is for tests, which
// cut splits of a few small rows into several shards; a user cannot reach
// it, being outside this module.
func SetLimit(n int64) (restore func()) {
	old := limit.Swap(n)
	return func() { limit.Store(old) }
}

// RowBytes bounds the bytes one row of width w and depth d takes in a
// shard of either format: 5 a float value and TextBytes, which also holds
// the offsets of the narrowest shapes. A float value takes its 4 bytes
// and a byte more, for parquet's repetition and definition levels, at
// most 5 bits a value, or for Arrow's list offsets, 4 bytes a list of w
// values. A shape too large to count is math.MaxInt64.
func RowBytes(w, d int) int64 {
	values := float64(d)*float64(w)*float64(w) + float64(d)*float64(w) + float64(w)
	if values > math.MaxInt64/8 {
		return math.MaxInt64
	}
	return 5*int64(values) + TextBytes
}

// Plan is how a split of Rows rows is cut into Count shards.
type Plan struct {
	Rows  int64
	Count int
}

// For is the plan of a split of rows rows of width w and depth d: as
// many rows a shard as RowBytes says fit in Limit besides FileBytes, at
// least one, in as few shards as that allows, and one for an empty split.
// A row larger than Limit is a shard of its own, as save_to_disk never
// makes more shards than rows. A split that needs more than MaxCount
// shards is refused.
func For(w, d int, rows int64) (Plan, error) {
	if rows < 0 {
		return Plan{}, fmt.Errorf("a split of %d rows", rows)
	}
	perShard := max(1, (Limit()-FileBytes)/RowBytes(w, d))
	count := int64(1)
	if rows > 0 {
		count = (rows-1)/perShard + 1
	}
	if count > MaxCount {
		return Plan{}, fmt.Errorf("%d rows of width %d and depth %d make %d shards of at most "+
			"%d bytes, more than the %d that five-digit shard names can number; "+
			"bake the split as several splits", rows, w, d, count, Limit(), MaxCount)
	}
	return Plan{Rows: rows, Count: int(count)}, nil
}

// Start is the first row of shard i: the rows are shared as
// Dataset.shard(num_shards, index, contiguous=True) shares them, the first
// Rows % Count shards taking one row more than the others.
func (p Plan) Start(i int) int64 {
	div, mod := p.Rows/int64(p.Count), p.Rows%int64(p.Count)
	return div*int64(i) + min(int64(i), mod)
}

// Len is the number of rows of shard i.
func (p Plan) Len(i int) int64 { return p.Start(i+1) - p.Start(i) }

// Name is shard i's file name: prefix-NNNNN-of-MMMMM.ext, numbered as
// datasets numbers its shards with f"{index:05d}-of-{num_shards:05d}".
func (p Plan) Name(prefix string, i int, ext string) string {
	return fmt.Sprintf("%s-%05d-of-%05d.%s", prefix, i, p.Count, ext)
}

// CheckSize refuses a shard of rows rows that grew to size bytes, past
// Limit: its rows hold more text than TextBytes allows a row. A shard of
// one row is as large as its row.
func CheckSize(size, rows int64) error {
	if rows <= 1 || size <= Limit() {
		return nil
	}
	return fmt.Errorf("it grew to %d bytes in %d rows, past the %d bytes a shard may hold: "+
		"its rows carry more text (mlp_name, sampling_budget_breakdown) than the %d bytes "+
		"a row is allowed besides its numbers", size, rows, Limit(), TextBytes)
}

// Tee is handed a shard's path once its file exists; the writer it
// returns is written every byte of the file, in order, right after the
// file, and closed once the shard is complete, its last byte written and
// the file synced. A shard whose writing fails is not closed: whoever
// made the writer gives it up.
type Tee func(path string) (io.WriteCloser, error)

// Counter is an io.Writer that counts what passes through it to W.
type Counter struct {
	W io.Writer
	N int64
}

func (c *Counter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
