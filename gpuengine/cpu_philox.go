package gpuengine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine/internal/cpukernel"
	"github.com/whestbake/whestbake/gpuengine/internal/exact"
	"github.com/whestbake/whestbake/gpuengine/internal/philox"
)

// DefaultPhiloxChunk is the samples per step (and per checkpoint) when none is given.
const DefaultPhiloxChunk = 1 << 16

// philoxBlockTiles is how many tiles one thread pushes through all layers at
// once: 256 rows keep both activation buffers of a W=256 net in L2.
const philoxBlockTiles = 8

// ErrBadCheckpoint is a checkpoint that cannot belong to this bake: resuming
// from it could only give wrong numbers, so no retry may use it.
var ErrBadCheckpoint = errors.New("checkpoint does not match this bake's shape: delete it to start the MLP over")

// PhiloxKey is the Philox key of an MLP: the first two words of its sample
// SeedSequence's state.
func PhiloxKey(job Job) [2]uint32 {
	k := job.Sample.GenerateState32(2)
	return [2]uint32{k[0], k[1]}
}

// philoxSums is one thread's exact totals: D·W layer sums then W squares.
type philoxSums []exact.Acc

func (p philoxSums) add(q philoxSums) {
	for i := range p {
		p[i].AddAcc(q[i])
	}
}

// bakePhilox computes the philox algorithm (docs/ALGORITHM.md): tiles of
// PhiloxTile samples, sequential float64 column sums inside a tile, tiles
// combined exactly. Steps of ChunkSize samples are split across threads; neither
// choice can change the result because integer addition is associative.
func bakePhilox(ctx context.Context, spec bakeapi.Spec, job Job, resume *Checkpoint, progress Progress) (Result, error) {
	w, d := spec.Width, spec.Depth
	nv := d*w + w
	total := make(philoxSums, nv)
	var done int64
	if resume != nil {
		if len(resume.LayerExact) != d*w || len(resume.SquareExact) != w || (resume.SamplesDone%PhiloxTile != 0 && resume.SamplesDone != spec.NSamples) {
			return Result{}, ErrBadCheckpoint
		}
		for i, s := range append(append([]string{}, resume.LayerExact...), resume.SquareExact...) {
			a, err := exact.Parse(s)
			if err != nil {
				return Result{}, fmt.Errorf("%w (%v)", ErrBadCheckpoint, err)
			}
			total[i] = a
		}
		done = resume.SamplesDone
	}
	sampler := philox.Sampler{Key: PhiloxKey(job), Width: w}
	chunk := int64(spec.ChunkSize)
	if chunk == 0 {
		chunk = DefaultPhiloxChunk
	}
	chunk = (chunk + PhiloxTile - 1) / PhiloxTile * PhiloxTile
	threads := max(1, job.Threads)
	workers := make([]*philoxWorker, threads)
	for i := range workers {
		workers[i] = newPhiloxWorker(spec, job.Weights, sampler)
	}
	for done < spec.NSamples {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		end := min(spec.NSamples, done+chunk)
		if err := runPhiloxStep(workers, done, end); err != nil {
			return Result{}, err
		}
		for _, wk := range workers {
			total.add(wk.sums)
			clear(wk.sums)
		}
		done = end
		if progress != nil {
			progress(philoxCheckpoint(total, d*w, done))
		}
	}
	return finishExact(total, d, w, spec.NSamples), nil
}

// finishExact rounds the exact totals (D·W layer sums, then W squares) to
// float64 once and computes the statistics.
func finishExact(total philoxSums, d, w int, n int64) Result {
	layer := make([]float64, d*w)
	sq := make([]float64, w)
	for i := range layer {
		layer[i] = total[i].Float64()
	}
	for j := range sq {
		sq[j] = total[d*w+j].Float64()
	}
	return finish(layer, sq, n, w)
}

func philoxCheckpoint(total philoxSums, nLayer int, done int64) Checkpoint {
	cp := Checkpoint{Algorithm: bakeapi.PhiloxAlgorithm, SamplesDone: done,
		LayerExact: make([]string, nLayer), SquareExact: make([]string, len(total)-nLayer)}
	for i, a := range total {
		if i < nLayer {
			cp.LayerExact[i] = a.String()
		} else {
			cp.SquareExact[i-nLayer] = a.String()
		}
	}
	return cp
}

// runPhiloxStep splits samples [start, end) into contiguous tile ranges, one per worker.
func runPhiloxStep(workers []*philoxWorker, start, end int64) error {
	tiles := (end - start + PhiloxTile - 1) / PhiloxTile
	per := (tiles + int64(len(workers)) - 1) / int64(len(workers))
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	for i, wk := range workers {
		a := start + int64(i)*per*PhiloxTile
		b := min(end, a+per*PhiloxTile)
		if a >= b {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = wk.run(a, b)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

type philoxWorker struct {
	spec    bakeapi.Spec
	weights []float32
	sampler philox.Sampler
	x, y    []float32
	part    []float64
	sums    philoxSums
}

func newPhiloxWorker(spec bakeapi.Spec, weights []float32, s philox.Sampler) *philoxWorker {
	rows := philoxBlockTiles * PhiloxTile
	return &philoxWorker{spec: spec, weights: weights, sampler: s,
		x: make([]float32, rows*spec.Width), y: make([]float32, rows*spec.Width),
		part: make([]float64, spec.Width), sums: make(philoxSums, spec.Depth*spec.Width+spec.Width)}
}

// run adds the exact tile sums of samples [a, b) (a tile-aligned) to wk.sums.
func (wk *philoxWorker) run(a, b int64) error {
	w, d := wk.spec.Width, wk.spec.Depth
	var err error
	for first := a; first < b; first += philoxBlockTiles * PhiloxTile {
		rows := int(min(b-first, philoxBlockTiles*PhiloxTile))
		wk.sampler.Fill(wk.x, first, rows)
		forwardLayers(wk.spec, 1, wk.weights, wk.x, wk.y, rows, cpukernel.FMA, func(l int, act []float32) {
			for t := 0; t < rows; t += PhiloxTile {
				tr := min(PhiloxTile, rows-t)
				tile := act[t*w : (t+tr)*w]
				wk.addTile(wk.sums[l*w:(l+1)*w], tile, tr, cpukernel.AddColumnSums, &err)
				if l == d-1 {
					wk.addTile(wk.sums[d*w:], tile, tr, cpukernel.AddColumnSquares, &err)
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (wk *philoxWorker) addTile(dst philoxSums, tile []float32, rows int, sum func([]float64, []float32, int, int), err *error) {
	clear(wk.part)
	sum(wk.part, tile, rows, wk.spec.Width)
	for j, v := range wk.part {
		if e := dst[j].Add(v); e != nil && *err == nil {
			*err = fmt.Errorf("activations left the exact accumulator's range (|sum| ≥ 2^103): the network diverges; %v", e)
		}
	}
}
