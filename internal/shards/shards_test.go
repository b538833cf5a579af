package shards

import (
	"slices"
	"strings"
	"testing"
)

// plan is For's plan, failing the test on an error.
func plan(t *testing.T, w, d int, rows int64) Plan {
	t.Helper()
	p, err := For(w, d, rows)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lens are the rows of every shard of p.
func lens(p Plan) []int64 {
	out := make([]int64, p.Count)
	for i := range out {
		out[i] = p.Len(i)
	}
	return out
}

// A split that fits in one shard is one, the empty split too: what every
// writer wrote before splits were cut.
func TestASplitThatFitsIsOneShard(t *testing.T) {
	for _, rows := range []int64{0, 1, 1000} {
		if p := plan(t, 4, 2, rows); p.Count != 1 || p.Len(0) != rows {
			t.Errorf("%d rows of 4×2: %+v, want one shard of them all", rows, p)
		}
	}
}

// The benchmark's split, 10,000 MLPs of width 256 and depth 8 (about
// 21 GB), is 54 shards of 185 or 186 rows: 188 rows of at most RowBytes
// fit in 500 MB besides FileBytes, and the rows are shared as datasets'
// Dataset.shard(contiguous=True) shares them (the first 10,000 % 54 = 10
// shards one row more).
func TestTheBenchmarkSplit(t *testing.T) {
	if got := RowBytes(256, 8); got != 5*(8*256*256+8*256+256)+TextBytes {
		t.Fatalf("RowBytes(256, 8) = %d", got)
	}
	if perShard := (MaxBytes - FileBytes) / RowBytes(256, 8); perShard != 188 {
		t.Fatalf("%d rows of 256×8 fit in a shard, want 188", perShard)
	}
	p := plan(t, 256, 8, 10_000)
	if p.Count != 54 {
		t.Fatalf("%d shards, want 54", p.Count)
	}
	var next int64
	for i, n := range lens(p) {
		want := int64(185)
		if i < 10 {
			want = 186
		}
		if n != want || p.Start(i) != next {
			t.Errorf("shard %d starts at %d with %d rows, want %d and %d", i, p.Start(i), n,
				next, want)
		}
		next += n
	}
	if next != 10_000 {
		t.Errorf("the shards hold %d rows", next)
	}
	// The bytes of the largest shard, at RowBytes a row: within MaxBytes.
	if bound := FileBytes + 186*RowBytes(256, 8); bound > MaxBytes {
		t.Errorf("a shard of 186 rows may take %d bytes, past %d", bound, MaxBytes)
	}
}

// Dataset.shard's docstring: "If len(dataset) % n == l, then the first l
// dataset each have length (len(dataset) // n) + 1, and the remaining
// dataset have length (len(dataset) // n)", contiguous and in order.
func TestRowsAreSharedAsDatasetsShardsThem(t *testing.T) {
	defer SetLimit(FileBytes + 4*RowBytes(4, 2))()
	for _, c := range []struct {
		rows int64
		want []int64
	}{
		{4, []int64{4}},
		{5, []int64{3, 2}},
		{9, []int64{3, 3, 3}},
		{10, []int64{4, 3, 3}},
		{13, []int64{4, 3, 3, 3}},
	} {
		got := lens(plan(t, 4, 2, c.rows))
		if !slices.Equal(got, c.want) {
			t.Errorf("%d rows at 4 a shard: shards of %v, want %v", c.rows, got, c.want)
		}
	}
}

// A row larger than a shard may be is a shard of its own, and a row too
// large to count is one too; a split that would need more shards than
// five digits number is refused before anything is written.
func TestRowsLargerThanAShard(t *testing.T) {
	if p := plan(t, 16384, 1024, 3); p.Count != 3 {
		t.Errorf("3 rows of a terabyte each: %d shards, want 3", p.Count)
	}
	if p := plan(t, 1<<30, 1<<30, 2); p.Count != 2 {
		t.Errorf("2 rows beyond counting: %d shards, want 2", p.Count)
	}
	_, err := For(16384, 1024, MaxCount+1)
	if err == nil || !strings.Contains(err.Error(), "more than the 99999 that five-digit") {
		t.Errorf("a split of %d shards: %v", MaxCount+1, err)
	}
	if _, err := For(4, 2, -1); err == nil {
		t.Error("a split of -1 rows was planned")
	}
}

// Shard names number as datasets numbers them.
func TestNames(t *testing.T) {
	p := Plan{Rows: 30, Count: 12}
	if got := p.Name("data", 3, "arrow"); got != "data-00003-of-00012.arrow" {
		t.Errorf("name %s", got)
	}
	if got := p.Name("my-split", 11, "parquet"); got != "my-split-00011-of-00012.parquet" {
		t.Errorf("name %s", got)
	}
}

// A shard of several rows past Limit is refused, saying why; a shard of
// one row is as large as its row.
func TestCheckSize(t *testing.T) {
	defer SetLimit(1000)()
	if err := CheckSize(1000, 5); err != nil {
		t.Errorf("a shard at the limit: %v", err)
	}
	if err := CheckSize(5000, 1); err != nil {
		t.Errorf("a shard of one large row: %v", err)
	}
	err := CheckSize(1001, 2)
	if err == nil || !strings.Contains(err.Error(), "grew to 1001 bytes in 2 rows, past the 1000") ||
		!strings.Contains(err.Error(), "sampling_budget_breakdown") {
		t.Errorf("a shard past the limit: %v", err)
	}
}
