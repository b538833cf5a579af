// Package suite runs the workloads of the performance and memory regression
// gate that docs/benchmarks.md describes, and returns their figures as gate metrics:
//
//   - the CPU engines at W=256 D=8 and W=64 D=4: throughput as a ratio to the
//     numpy peer, whestbench's create_dataset, run beside them and to the
//     baseline commit's build, A/B and interleaved; peak RSS; heap
//     allocations per sample;
//   - a local slice + merge + combine of 256 MLPs of W=256 D=8 with the
//     whestbake command: peak RSS of each verb, dataset size;
//   - a small bake through Temporal on a private dev stack: history events,
//     S3 requests and bytes per slice, the worker's peak RSS.
//
// Every figure is either a ratio to a reference measured in the same run,
// a peak of memory on fixed inputs, or a count that no clock changes.
package suite

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/whestbake/whestbake/internal/bench/gate"
)

// Options say what a run measures, with which programs, and how often.
type Options struct {
	Root   string // module root of the tree under test
	Dir    string // scratch space, removed by the caller
	Python string // interpreter of the numpy peer: the Python judge's, bench.JudgePython
	// Self is this tree's build of the suite's program, which `probe`s the
	// engines in a child process. AB asks for the A/B runs against Ref, the
	// baseline commit's build of it, which the caller builds only when Plan
	// selects an A/B metric.
	Self, Ref string
	AB        bool
	// SlowDown, when positive, makes this tree's engine probes burn that
	// fraction of their measured CPU time again inside the timed bake,
	// allocating nothing: a slowed build on demand, to show that the gate
	// fails one, as benchgate check --demo-slowdown does. The A/B reference's
	// probes never get it.
	SlowDown float64
	// EngineReps is how many interleaved rounds each engine shape runs;
	// Runs is how many times the pipeline and the Temporal bake run.
	EngineReps, Runs int
	// Selected picks metrics, all of them when nil; a job runs if it has one selected.
	Selected func(gate.Metric) bool
	// Log receives one line per step, for a human watching.
	Log io.Writer
}

// job is a group of workloads measured together, with the metrics it can
// report: one engine shape's runs share their numpy peer runs.
type job struct {
	metrics []gate.Metric // Values empty
	// run measures the selected metrics.
	run func(
		ctx context.Context,
		o Options,
		want func(workload, name string) bool,
	) (measured, error)
}

// measured is what a job's run reports, by metric Key: each metric's
// repetitions, and for a ratio to a peer what the peer ran on,
// gate.Metric.Peer.
type measured struct {
	values map[string][]float64
	peers  map[string]string
}

// EngineShape is a network shape the engine workloads bake, and the samples
// of one timed bake.
type EngineShape struct {
	Width, Depth int
	Samples      int64
}

// EngineShapes are the engine workloads' shapes: the W=256 D=8 and
// a small width where everything outside the forward kernel weighs most.
var EngineShapes = []EngineShape{{256, 8, 1 << 16}, {64, 4, 1 << 20}}

func jobs() []job {
	var out []job
	for _, sh := range EngineShapes {
		out = append(out, engineJob(sh.Width, sh.Depth, sh.Samples))
	}
	return append(out, pipelineJob(), temporalJob())
}

// Plan lists the metrics a run with o measures, in order.
func Plan(o Options) []gate.Metric {
	var out []gate.Metric
	for _, j := range jobs() {
		out = append(out, j.selected(o)...)
	}
	return out
}

func (j job) selected(o Options) []gate.Metric {
	var out []gate.Metric
	for _, m := range j.metrics {
		if m.InRun && !o.AB {
			continue
		}
		if o.Selected == nil || o.Selected(m) {
			out = append(out, m)
		}
	}
	return out
}

// Run runs every job with a selected metric. A job that fails reports its
// error on each of its metrics instead of values, and the other jobs go on.
func Run(ctx context.Context, o Options) []gate.Metric {
	var out []gate.Metric
	for _, j := range jobs() {
		sel := j.selected(o)
		if len(sel) == 0 {
			continue
		}
		want := func(workload, name string) bool {
			return slices.ContainsFunc(sel, func(m gate.Metric) bool {
				return m.Workload == workload && m.Name == name
			})
		}
		got, err := j.run(ctx, o, want)
		for _, m := range sel {
			switch v, ok := got.values[m.Key()]; {
			case err != nil:
				m.Err = err.Error()
			case !ok:
				m.Err = "the workload reported no value"
			default:
				m.Values = v
				m.Peer = got.peers[m.Key()]
			}
			out = append(out, m)
		}
	}
	return out
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

const mib = 1 << 20
