// Package rows turns a plan's MLPs into dataset rows: seeds give the
// numpy-identical weights, the engine their statistics, and both make the
// row and the bake's metadata. It also holds what a bake needs of its
// machine, the memory rule and a worker's checkpoint defaults, so that the
// local bake, the activities and the config share them.
package rows

import (
	"context"
	"fmt"
	"sync"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seeds"
)

// Plan is everything that determines a bake's rows.
type Plan struct {
	NMLPs  int
	Seeds  mlps.SeedFile
	Range  bakeapi.Range
	Spec   bakeapi.Spec
	Split  string
	Config string
	// Salt is protocol 4.0's salt, which Spec.Salt declares; zero under 3.0.
	Salt seeds.Salt
}

// Validate checks the plan with the one validator of bakeapi and returns
// every problem at once as bakeapi.FieldErrors; front ends rename the fields
// into their flags or config keys.
func (p Plan) Validate() error {
	if err := p.ValidateSettings(); err != nil {
		return err
	}
	if len(p.Seeds.Seeds) != p.NMLPs {
		problem := fmt.Sprintf(
			"holds %d seeds but n-mlps is %d: "+
				"generate a list of n-mlps seeds with `whestbake dataset generate-seeds`",
			len(p.Seeds.Seeds),
			p.NMLPs,
		)
		return bakeapi.FieldErrors{{Field: bakeapi.FieldMLPSeeds, Problem: problem}}
	}
	// Spec.Validate has checked the declaration; the salt must be the one
	// it declares, so the metadata cannot name another salt than the rows'.
	switch v4 := p.Spec.Protocol() == bakeapi.SeedProtocolV4; {
	case v4 && p.Salt.IsZero():
		return fmt.Errorf("bake plan: seed protocol 4.0 without its salt")
	case !v4 && !p.Salt.IsZero():
		return fmt.Errorf(
			"bake plan: seed protocol %s has no salt, but one was given",
			p.Spec.Protocol(),
		)
	case v4 && p.Salt.Digest() != p.Spec.Salt.SHA256:
		return fmt.Errorf(
			"bake plan: the salt's SHA-256 %s is not the declared %s",
			p.Salt.Digest(),
			p.Spec.Salt.SHA256,
		)
	}
	return p.Range.Validate(p.NMLPs)
}

// ValidateSettings is the part of Validate that needs neither the seeds nor
// the range: the spec and the split's names and MLP count. A front end calls it
// first, because NMLPs sizes the seed list it then reads or draws.
func (p Plan) ValidateSettings() error {
	return bakeapi.Join(p.Spec.Validate(), bakeapi.ValidateSplit(p.Split, p.Config, int64(p.NMLPs)))
}

// Baker bakes MLPs of one spec on one engine: the parameters every row of
// a bake shares, so that Row and Stream take only what differs per call,
// the shape of minio-go's uploadPartParams.
type Baker struct {
	Engine gpuengine.Engine
	Spec   bakeapi.Spec
	// Threads is how many CPU threads a Row uses, and a Stream in all.
	Threads int
	// Progress, when set, receives the number of newly finished samples.
	// Stream calls it from one goroutine at a time; a caller of Row from
	// several goroutines serializes it itself.
	Progress func(samples int64)
}

// Row bakes MLP m into a dataset row. The row's weights are written into
// buf when it is large enough.
func (b Baker) Row(ctx context.Context, m mlps.MLP, buf []float32) (dataset.Row, error) {
	w, err := Weights(b.Spec, m, buf)
	if err != nil {
		return dataset.Row{}, err
	}
	job := gpuengine.Job{Weights: w, Sample: m.Streams.Sample, Threads: b.Threads}
	res, err := b.Engine.BakeMLP(ctx, b.Spec, job, nil, b.checkpoints())
	if err != nil {
		return dataset.Row{}, fmt.Errorf("MLP %d (seed %d): %w", m.Index, m.Seed, err)
	}
	return NewRow(b.Spec, m, w, res), nil
}

// checkpoints turns the engine's checkpoints of one MLP into Progress's
// newly finished samples, or is nil without a Progress.
func (b Baker) checkpoints() gpuengine.Progress {
	if b.Progress == nil {
		return nil
	}
	var last int64
	return func(cp gpuengine.Checkpoint) {
		b.Progress(cp.SamplesDone - last)
		last = cp.SamplesDone
	}
}

// Weights is MLP m's weights, identical to numpy's, written into buf when
// it is large enough.
func Weights(spec bakeapi.Spec, m mlps.MLP, buf []float32) ([]float32, error) {
	return seeds.WeightsInto(buf, spec.Width, spec.Depth, m.Streams.Weight)
}

// NewRow is the one assembly of a dataset row: MLP m's identity, its
// weights w and the engine's statistics res, whether just computed or read
// back from a stored result. The row keeps w and res.LayerMeans.
func NewRow(spec bakeapi.Spec, m mlps.MLP, w []float32, res gpuengine.Result) dataset.Row {
	return dataset.Row{
		MLPID:       int32(m.Index),
		Name:        m.Name,
		Seed:        m.Seed,
		Weights:     w,
		LayerMeans:  res.LayerMeans,
		FinalMeans:  append([]float32(nil), res.FinalMeans(spec.Width)...),
		AvgVariance: res.AvgVariance,
		Breakdown:   Breakdown(spec),
	}
}

// parallelMLPSamples is the per-thread sample count above which one MLP keeps
// every thread busy on its own.
const parallelMLPSamples = 1 << 15

// batchBytes bounds the rows of MLPs baked side by side, one row of width
// 1024 × depth 16. Larger rows are baked one at a time with every thread
// inside, so that a bake holds one row however many threads it has.
const batchBytes = 64 << 20

// batchSize is how many of n MLPs Stream bakes side by side on threads
// threads.
func batchSize(spec bakeapi.Spec, threads, n int) int {
	if spec.NSamples >= int64(threads)*parallelMLPSamples {
		return 1
	}
	return max(1, min(threads, n, int(batchBytes/dataset.RowBytes(spec))))
}

// Stream bakes MLPs [r.Start, r.End) of ids with up to b.Threads CPU
// threads in all and hands each row to emit, in index order, so a caller
// can write rows as they come and hold at most a batch of them: memory is
// bounded by a few rows, not by the dataset. Big MLPs run one after
// another with every thread inside, leaving no idle tail when the count is
// not a multiple of the threads, and so do rows over batchBytes. Small ones
// run side by side in batches, where per-step overheads would dominate. A
// row's weights array is reused for later rows once emit returns, so emit
// copies what it keeps.
func (b Baker) Stream(
	ctx context.Context,
	ids []mlps.MLP,
	r bakeapi.Range,
	emit func(dataset.Row) error,
) error {
	threads := max(1, b.Threads)
	par := batchSize(b.Spec, threads, r.Len())
	inner := b
	inner.Threads = max(1, threads/par)
	if b.Progress != nil {
		var mu sync.Mutex
		inner.Progress = func(n int64) {
			mu.Lock()
			b.Progress(n)
			mu.Unlock()
		}
	}
	batch := make([]dataset.Row, par)
	// Each slot's weights are written over the last batch's: a fresh array
	// per row would leave the collector a row of garbage per MLP, and let
	// the heap grow to twice the rows before it reclaims any.
	weights := make([][]float32, par)
	for start := r.Start; start < r.End; start += par {
		n := min(par, r.End-start)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Go(func() {
				batch[k], errs[k] = inner.Row(ctx, ids[start+k], weights[k])
			})
		}
		wg.Wait()
		for k := 0; k < n; k++ {
			if errs[k] != nil {
				return errs[k]
			}
			if err := emit(batch[k]); err != nil {
				return err
			}
			weights[k] = batch[k].Weights // the next batch writes over them
			batch[k] = dataset.Row{}
		}
	}
	return ctx.Err()
}

// NormalizeSpec is the one completion of a Spec that a front end builds
// as a literal from its values, the local CLI's flags or the Temporal
// bake's config keys, before its seed protocol and salt. The dot product
// belongs to the numpy sampler only, so a philox spec drops it: its default
// is numpy's. Validation is the Spec's own.
func NormalizeSpec(s bakeapi.Spec) bakeapi.Spec {
	if s.Sampler != bakeapi.SamplerNumpy {
		s.Dot = ""
	}
	return s
}
