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

// DefaultPhiloxChunk is the samples per step, and per checkpoint, when none is given.
const DefaultPhiloxChunk = 1 << 16

// philoxBlockTiles is how many tiles one thread pushes through all layers at
// once: 192 rows keep both activation buffers of a W=256 net in L2, and are
// whole register blocks of every forward kernel, AVX-512's 6 rows and AVX2's 4,
// so no block but a bake's last one has a ragged tail for the kernel to pad.
const philoxBlockTiles = 6

// PhiloxBlockRows is the samples of such a block: the rows of each forward
// kernel call a philox worker makes.
const PhiloxBlockRows = philoxBlockTiles * PhiloxTile

// ErrBadCheckpoint is a checkpoint that cannot belong to this bake: resuming
// from it could only give wrong numbers, so no retry may use it.
var ErrBadCheckpoint = errors.New(
	"checkpoint does not match this bake's shape: delete it to start the MLP over",
)

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

// bakePhilox computes the philox algorithm of docs/ALGORITHM.md: tiles of
// PhiloxTile samples, sequential float64 column sums inside a tile, tiles
// combined exactly. Steps of ChunkSize samples are split across threads; neither
// choice can change the result because integer addition is associative.
// clocks, when not nil, holds a phase clock per worker for ProfilePhilox.
func bakePhilox(
	ctx context.Context,
	spec bakeapi.Spec,
	job Job,
	resume *Checkpoint,
	progress Progress,
	clocks []*workerClock,
) (Result, error) {
	w, d := spec.Width, spec.Depth
	nv := d*w + w
	total := make(philoxSums, nv)
	var done int64
	if resume != nil {
		if len(resume.LayerExact) != d*w || len(resume.SquareExact) != w ||
			(resume.SamplesDone%PhiloxTile != 0 && resume.SamplesDone != spec.NSamples) {
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
		if clocks != nil {
			workers[i].clock = clocks[i]
		}
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

// finishExact rounds the exact totals, D·W layer sums then W squares, to
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
	cp := Checkpoint{
		Algorithm:   bakeapi.PhiloxAlgorithm,
		SamplesDone: done,
		LayerExact:  make([]string, nLayer),
		SquareExact: make([]string, len(total)-nLayer),
	}
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
	// part holds a block's tile sums of one layer, tile by tile.
	part []float64
	sums philoxSums
	// clock splits the worker's CPU time by phase; nil unless ProfilePhilox
	// profiles.
	clock *workerClock
}

func newPhiloxWorker(spec bakeapi.Spec, weights []float32, s philox.Sampler) *philoxWorker {
	return &philoxWorker{
		spec:    spec,
		weights: weights,
		sampler: s,
		x:       make([]float32, PhiloxBlockRows*spec.Width),
		y:       make([]float32, PhiloxBlockRows*spec.Width),
		part:    make([]float64, philoxBlockTiles*spec.Width),
		sums:    make(philoxSums, spec.Depth*spec.Width+spec.Width),
	}
}

// run adds the exact tile sums of samples [a, b), a tile-aligned, to wk.sums.
func (wk *philoxWorker) run(a, b int64) error {
	w, d := wk.spec.Width, wk.spec.Depth
	defer wk.clock.lockThread()()
	var err error
	for first := a; first < b && err == nil; first += PhiloxBlockRows {
		rows := int(min(b-first, PhiloxBlockRows))
		wk.clock.startBlock()
		wk.sampler.Fill(wk.x, first, rows)
		wk.clock.mark(workerSampling)
		forwardLayers(
			wk.spec,
			1,
			wk.weights,
			wk.x,
			wk.y,
			rows,
			cpukernel.FMA,
			func(l int, act []float32) {
				wk.clock.mark(workerForward)
				if err == nil {
					err = wk.addTiles(wk.sums[l*w:(l+1)*w], act, rows, cpukernel.AddColumnSums)
				}
				if l == d-1 && err == nil {
					err = wk.addTiles(wk.sums[d*w:], act, rows, cpukernel.AddColumnSquares)
				}
			},
		)
		wk.clock.endBlock()
	}
	return err
}

// addTiles adds the column sums, or sums of squares, of each tile of a
// block's rows×W activations to dst exactly: first every tile's float64 sums,
// then their fixed-point additions, two tight loops.
func (wk *philoxWorker) addTiles(
	dst philoxSums,
	act []float32,
	rows int,
	sum func([]float64, []float32, int, int),
) error {
	w := wk.spec.Width
	part := wk.part[:(rows+PhiloxTile-1)/PhiloxTile*w]
	clear(part)
	for t := 0; t*PhiloxTile < rows; t++ {
		r0, r1 := t*PhiloxTile, min(rows, (t+1)*PhiloxTile)
		sum(part[t*w:(t+1)*w], act[r0*w:r1*w], r1-r0, w)
	}
	wk.clock.mark(workerSums)
	defer wk.clock.mark(workerExact)
	for t := 0; t*w < len(part); t++ {
		if err := exact.AddEach(dst, part[t*w:(t+1)*w]); err != nil {
			return fmt.Errorf(
				"activations left the exact accumulator's range (|sum| ≥ 2^103): "+
					"the network diverges; %v",
				err,
			)
		}
	}
	return nil
}
