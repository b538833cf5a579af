package breakdown

import (
	"math/big"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// cpuChunk is whestbench's CPU chunk rule, max(1024, min(16384, 2^20/W)).
func cpuChunk(w int) int { return max(1024, min(16384, (1<<20)/w)) }

func parseBreakdown(t *testing.T, s string) *pyjson.Object {
	t.Helper()
	v, err := pyjson.Loads([]byte(s))
	if err != nil {
		t.Fatalf("breakdown is not JSON: %v\n%s", err, s)
	}
	return v.(*pyjson.Object)
}

func bigInt(t *testing.T, o *pyjson.Object, key string) *big.Int {
	t.Helper()
	v, _ := o.Get(key)
	n, ok := new(big.Int).SetString(pyjson.Compact(v), 10)
	if !ok {
		t.Fatalf("%s = %v is not an integer", key, v)
	}
	return n
}

// Anchors for the flopscope-0.12 model, which whestbench's
// https://github.com/AIcrowd/whestbench/blob/main/tests/test_torch_flop_synthesis.py
// asserts equal to flopscope's count.
func TestBreakdownAnchors(t *testing.T) {
	for _, c := range []struct {
		w, d  int
		n     int64
		flops string
		calls int64
	}{
		{4, 2, 100, "31012", 28},
		{8, 2, 100, "74824", -1},
	} {
		bd := parseBreakdown(t, Text(c.w, c.d, c.n, cpuChunk(c.w), 0.25))
		if got := bigInt(t, bd, "flops_used").String(); got != c.flops {
			t.Errorf("(%d,%d,%d) flops_used %s want %s", c.w, c.d, c.n, got, c.flops)
		}
		ns, _ := bd.GetObject("by_namespace")
		bucket, _ := ns.GetObject("sampling.sample_layer_statistics")
		if calls, _ := bucket.GetInt("calls"); c.calls > 0 && calls != c.calls {
			t.Errorf("(%d,%d,%d) calls %d want %d", c.w, c.d, c.n, calls, c.calls)
		}
	}
	prod := parseBreakdown(t, Text(1024, 16, 1_000_000_000, cpuChunk(1024), 1))
	f, _ := new(big.Float).SetInt(bigInt(t, prod, "flops_used")).Float64()
	if f < 3.3665e16 || f >= 3.3675e16 {
		t.Errorf("(1024,16,1e9) flops_used %.4g want about 3.367e16", f)
	}
}

func TestBreakdownShape(t *testing.T) {
	s := Text(4, 2, 100, 30, 0.1)
	if strings.Contains(s, "\n") ||
		!strings.Contains(s, `"time_source": "bake", "by_namespace": {`) {
		t.Errorf("not json.dumps default layout: %s", s)
	}
	bd := parseBreakdown(t, s)
	wantKeys := "flop_budget,flops_used,flops_remaining,wall_time_s," +
		"flopscope_backend_time_s,flopscope_overhead_time_s,residual_wall_time_s," +
		"time_source,by_namespace,provenance"
	if got := strings.Join(bd.Keys(), ","); got != wantKeys {
		t.Errorf("keys %s", got)
	}
	if bigInt(t, bd, "flop_budget").Cmp(bigInt(t, bd, "flops_used")) != 0 ||
		bigInt(t, bd, "flops_remaining").Sign() != 0 {
		t.Error("unbudgeted bake must record budget == used, remaining 0")
	}
	if w, _ := bd.GetFloat("residual_wall_time_s"); w != 0.1 {
		t.Errorf("residual %v", w)
	}
	ns, _ := bd.GetObject("by_namespace")
	bucket, _ := ns.GetObject("sampling.sample_layer_statistics")
	ops, _ := bucket.GetObject("operations")
	sum := new(big.Int)
	for _, k := range ops.Keys() {
		op, _ := ops.GetObject(k)
		if !op.Has("flopscope_overhead_time_s") {
			t.Errorf("operation %s lacks flopscope_overhead_time_s", k)
		}
		sum.Add(sum, bigInt(t, op, "flop_cost"))
	}
	if !bucket.Has("flopscope_overhead_time_s") || sum.Cmp(bigInt(t, bd, "flops_used")) != 0 {
		t.Error("operations do not add up to flops_used")
	}
	prov, _ := bd.GetObject("provenance")
	if k, _ := prov.GetInt("n_chunks"); k != 4 {
		t.Errorf("n_chunks %d want ceil(100/30) = 4", k)
	}
	if c, _ := prov.GetInt("chunk_size"); c != 30 {
		t.Errorf("chunk_size %d", c)
	}

	over := parseBreakdown(t, Text(4, 2, 100, 30, 0.1, FlopBudget(1000)))
	if b := bigInt(t, over, "flop_budget"); b.Int64() != 1000 ||
		bigInt(t, over, "flops_remaining").Sign() >= 0 {
		t.Error("a stated budget is recorded verbatim with an unclamped remainder")
	}
}

// Chunking moves FLOPs between sum and add but not the total, except for a
// final chunk of exactly one row, which flopscope bills 2(d+1) more.
func TestBreakdownChunkingAndTail(t *testing.T) {
	total := func(n int64, chunk int) *big.Int {
		return bigInt(t, parseBreakdown(t, Text(8, 3, n, chunk, 0)), "flops_used")
	}
	if total(1000, 1000).Cmp(total(1000, 7)) != 0 {
		t.Error("chunk size changed the total")
	}
	diff := new(big.Int).Sub(total(1001, 100), total(1001, 1001))
	if diff.Int64() != 2*(3+1) {
		t.Errorf("1-row tail adds %v, want 8", diff)
	}
	// A bake of one sample is a 1-row chunk too. flopscope 0.12.3, under
	// whestbench 0.16.2's create_dataset, bills its sum 2(d+1):
	// 4 at depth 1, 6 at depth 2, 12 at depth 5, at any width.
	for _, c := range []struct{ w, d, sum int }{{5, 1, 4}, {300, 2, 6}, {7, 5, 12}} {
		bd := parseBreakdown(t, Text(c.w, c.d, 1, cpuChunk(c.w), 0))
		ns, _ := bd.GetObject("by_namespace")
		bucket, _ := ns.GetObject("sampling.sample_layer_statistics")
		ops, _ := bucket.GetObject("operations")
		sum, _ := ops.GetObject("sum")
		if got := bigInt(t, sum, "flop_cost"); got.Int64() != int64(c.sum) {
			t.Errorf("(%d,%d,1) sum flop_cost %v, want %d", c.w, c.d, got, c.sum)
		}
	}
	// Large bakes overflow int64 products; the counts stay exact.
	huge := bigInt(t, parseBreakdown(t, Text(4096, 64, 1_000_000_000_000, 1<<20, 0)), "flops_used")
	if huge.IsInt64() {
		t.Errorf("flops_used %v should exceed int64", huge)
	}
}

func TestBreakdownPanicsOnNonsense(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("chunk 0 did not panic")
		}
	}()
	Text(4, 2, 100, 0, 0)
}
