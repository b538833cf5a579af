// Package breakdown writes the sampling_budget_breakdown column of a row:
// whestbench's record of the FLOPs and time its sampler spent on one MLP,
// as the JSON text whestbench's torch backend writes.
package breakdown

import (
	"fmt"
	"math/big"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// Option adjusts Text.
type Option func(*config)

type config struct{ budget *big.Int }

// FlopBudget records the budget the bake ran under. Without it the budget
// is recorded equal to flops_used, as for an unbudgeted reference bake. A stated
// budget is recorded verbatim and the remainder is not clamped, so an
// overrun shows as a negative flops_remaining.
func FlopBudget(b int64) Option {
	return func(c *config) { c.budget = big.NewInt(b) }
}

const breakdownNote = "whestbake computes outside flopscope's instrumentation, so these are " +
	"closed-form FLOP counts of the operations of whestbench's numpy reference " +
	"(sample_layer_statistics), evaluated at the chunk_size recorded here. " +
	"The times are 0: a row depends on its seed and shape alone, and the bake's " +
	"wall clock is in its log."

// Text is the sampling_budget_breakdown JSON text of one row, as
// _synthesize_sampling_breakdown in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_torch.py
// writes it: whestbench's closed-form FLOP model of sample_layer_statistics
// under flopscope 0.12, in the key order of its torch backend, with time_source "bake", zero
// flopscope times, the whole wall time as residual, and a provenance block
// recording chunk_size and n_chunks. whest run reads flopscope_overhead_time_s
// at the top level and in every namespace bucket, so those keys are always
// present.
//
// width, depth, nSamples and chunk must be positive; Text panics
// otherwise, since that is a caller bug, not a data condition.
func Text(width, depth int, nSamples int64, chunk int, wallTimeS float64, opts ...Option) string {
	if width <= 0 || depth <= 0 || nSamples <= 0 || chunk <= 0 {
		panic(fmt.Sprintf("dataset.Breakdown: width=%d depth=%d nSamples=%d chunk=%d "+
			"must all be positive", width, depth, nSamples, chunk))
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	ops, k := closedFormOps(int64(width), int64(depth), nSamples, int64(chunk))
	total, calls := new(big.Int), new(big.Int)
	operations := pyjson.NewObject()
	for _, op := range ops {
		total.Add(total, op.flops)
		calls.Add(calls, op.calls)
		operations.Set(op.name, pyjson.NewObject().
			Set("flop_cost", op.flops).
			Set("calls", op.calls).
			Set("flopscope_backend_time_s", 0.0).
			Set("flopscope_overhead_time_s", 0.0))
	}
	budget := total
	if cfg.budget != nil {
		budget = cfg.budget
	}
	doc := pyjson.NewObject().
		Set("flop_budget", budget).
		Set("flops_used", total).
		Set("flops_remaining", new(big.Int).Sub(budget, total)).
		Set("wall_time_s", wallTimeS).
		Set("flopscope_backend_time_s", 0.0).
		Set("flopscope_overhead_time_s", 0.0).
		Set("residual_wall_time_s", wallTimeS).
		Set("time_source", "bake").
		Set("by_namespace", pyjson.NewObject().
			Set("sampling.sample_layer_statistics", pyjson.NewObject().
				Set("flops_used", total).
				Set("calls", calls).
				Set("flopscope_backend_time_s", 0.0).
				Set("flopscope_overhead_time_s", 0.0).
				Set("operations", operations))).
		Set("provenance", pyjson.NewObject().
			Set("method", "closed-form").
			Set("operation_model", "whestbench.simulation.sample_layer_statistics").
			Set("chunk_size", chunk).
			Set("n_chunks", k).
			Set("note", breakdownNote))
	b, err := pyjson.Dumps(doc, false)
	if err != nil {
		panic(err) // only strings, floats and integers above: cannot fail
	}
	return string(b)
}

type opCost struct {
	name         string
	flops, calls *big.Int
}

// closedFormOps is the per-operation model of flop_cost and calls of whestbench's
// _synthesize_sampling_breakdown for width w, depth d, n samples in chunks of
// c, and the number of chunks k. The forward pass is in float32, at rate 1;
// statistics in float64, which flopscope bills at twice the rate; reductions cost rows-1
// additions per column, so summed over the k chunks they cost n-k. Big integers
// because the products outgrow int64 for large bakes.
func closedFormOps(w, d, n, c int64) ([]opCost, int64) {
	k := (n + c - 1) / c
	// flopscope bills the sums of a 1-row final chunk a fixed cost where the
	// reduction model says 0: exactly 2(d+1) more. That includes a bake of
	// one sample, whose only chunk is that row: flopscope 0.12.3 under
	// whestbench 0.16.2's create_dataset bills sum 2(d+1) there, where the
	// torch backend's closed form, which needs k > 1, says 0.
	var tail int64
	if n-c*(k-1) == 1 {
		tail = 2 * (d + 1)
	}
	B := big.NewInt
	mul := func(xs ...int64) *big.Int {
		p := B(1)
		for _, x := range xs {
			p.Mul(p, B(x))
		}
		return p
	}
	add := func(x *big.Int, y int64) *big.Int { return x.Add(x, B(y)) }
	return []opCost{
		{"random.Generator.standard_normal", mul(16, n, w), B(k)},
		{"array", mul(n, w), B(k)},
		{"matmul", mul(d, n, w, 2*w-1), mul(d, k)},
		{"maximum", mul(d, n, w), mul(d, k)},
		{"asarray", mul(2, w, d+1, n+1), add(mul(d+1, k), 2)},
		{"sum", add(mul(2, d+1, n-k, w), tail), mul(d+1, k)},
		{"add", mul(2, d+1, k, w), mul(d+1, k)},
		{"power", mul(32, w, n+1), B(k + 1)},
		{"zeros", B(0), B(d + 1)},
		{"stack", mul(2, d, w), B(1)},
		{"true_divide", mul(2, w, d+1), B(2)},
		{"subtract", mul(2, w), B(1)},
		{"mean", mul(2, w), B(1)},
		{"copy", B(w), B(1)},
	}, k
}
