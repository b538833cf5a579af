package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/metrics"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// mlpResult is one finished MLP in the store; float bits keep it exact. Its
// seal ties it to its key, bake, split and spec fingerprint.
type mlpResult struct {
	MLP            int      `json:"mlp"`
	Seed           int64    `json:"seed"`
	Algorithm      string   `json:"algorithm"`
	Engine         string   `json:"engine"`
	Device         string   `json:"device"`
	LayerMeansBits []uint32 `json:"layer_means_bits"`
	AvgVarBits     uint64   `json:"avg_variance_bits"`
	// Fingerprint is the bake Record's fingerprint of the split it was
	// computed for: it is reused only by a slice of the same fingerprint.
	// The seal holds it too; workers of earlier releases, and objects
	// written by them, have only this one.
	Fingerprint string    `json:"fingerprint,omitempty"`
	Seal        seal.Seal `json:"seal"`
}

// storedCheckpoint is an engine checkpoint with the fingerprint of the spec
// it belongs to, sealed like a result.
type storedCheckpoint struct {
	Fingerprint string `json:"fingerprint,omitempty"`
	gpuengine.Checkpoint
	Seal seal.Seal `json:"seal"`
}

// sameSpec reports whether a stored object of fingerprint fp may serve a
// slice of in. Slices from histories before records existed carry no
// fingerprint and keep the older algorithm check alone.
func sameSpec(in bakeapi.BakeSliceInput, fp string) bool {
	return in.Fingerprint == "" || fp == in.Fingerprint
}

// sliceSeal is the identity of what the slice writes and reads: its bake,
// split and spec fingerprint (empty in histories from before records, whose
// slices keep the algorithm check alone).
func sliceSeal(in bakeapi.BakeSliceInput, key string) seal.Seal {
	return seal.Seal{Key: key, Bake: in.BakeID, Split: in.Split, Fingerprint: in.Fingerprint}
}

// mismatch is the refusal of an object computed for another spec of this bake ID.
func mismatch(what, key string, mlp int) error {
	return fatal(bakeapi.ErrFingerprintMismatch, "%s %s was computed for another spec than this bake's (a different config under the same bake ID): it is never reused; "+
		"start the bake under a new --id, or delete %s to recompute MLP %d", what, key, key, mlp)
}

// discard drops a damaged object that the slice recomputes (a result, a
// checkpoint, an identity block, its own uncommitted partial's manifest):
// logged, counted (whestbake_damaged_objects_total, and the slice's
// Discarded, which status shows), and deleted, so that its create-only
// replacement can be written. Retrying the read instead would fail the same
// way until the slice's attempts ran out.
func (a *Activities) discard(ctx context.Context, log tlog.Logger, hb *heartbeat, key string, err error) error {
	log.Warn("damaged object discarded; it is recomputed", "Key", key, "Error", err)
	a.Metrics.Damaged()
	hb.update(func(p *bakeapi.SliceProgress) { p.Discarded++ })
	if err := a.Store.Delete(ctx, key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return storeErr(err)
	}
	return nil
}

// BakeSlice computes a slice's MLPs and commits its partial dataset. Finished
// MLPs are never recomputed; an unfinished one resumes from its checkpoint.
// Every log line of the attempt carries BakeID, Split, Slice and (from the
// SDK's activity logger) Attempt, so one slice's story can be grepped out of
// a fleet's logs.
func (a *Activities) BakeSlice(ctx context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
	info := activity.GetInfo(ctx)
	log := tlog.With(activity.GetLogger(ctx), "BakeID", in.BakeID, "Split", in.Split, "Slice", in.Slice)
	log.Info("slice started", "MLPs", fmt.Sprintf("%d-%d", in.Start, in.End-1), "Engine", a.Engine.Describe().Engine)
	end := a.Metrics.SliceStarted(info.Attempt)
	start := time.Now()
	out, err := a.bakeSlice(ctx, in, log)
	end(err)
	if err != nil {
		log.Warn("slice attempt failed", "Error", err, "ErrorType", metrics.ErrorType(err), "Seconds", time.Since(start).Seconds())
		return out, err
	}
	outcome := metrics.Resumed
	switch {
	case out.Reused == in.End-in.Start && out.Computed == 0 && out.Resumed == 0:
		outcome = metrics.Reused
	case out.Reused == 0 && out.Resumed == 0:
		outcome = metrics.Computed
	}
	a.Metrics.SliceDone(outcome)
	log.Info("slice committed", "Outcome", outcome, "Computed", out.Computed, "Resumed", out.Resumed, "Reused", out.Reused, "Discarded", out.Discarded,
		"Seconds", time.Since(start).Seconds())
	return out, nil
}

func (a *Activities) bakeSlice(ctx context.Context, in bakeapi.BakeSliceInput, log tlog.Logger) (out bakeapi.BakeSliceOutput, _ error) {
	b := keys.Bake(in.BakeID)
	prefix := b.Slice(in.Split, in.Slice)
	out.Prefix = prefix
	hb := &heartbeat{p: bakeapi.SliceProgress{Split: in.Split, Slice: in.Slice, TotalMLPs: in.End - in.Start}}
	defer func() { p, _ := hb.snapshot(); out.Discarded = p.Discarded }()
	// Step 1. Committed by an earlier attempt: done. A damaged commit is
	// dropped, and the partial written again from the results.
	id := sliceSeal(in, "")
	if _, sum, done, err := committed(ctx, a.Store, prefix, id); damaged(err) {
		if err := a.discard(ctx, log, hb, keys.Manifest(prefix), err); err != nil {
			return out, err
		}
	} else if err != nil {
		return out, err
	} else if done {
		out.ManifestSHA256, out.Reused = sum, in.End-in.Start
		return out, nil
	}
	// Step 2. The plan, and the identities of the slice's MLPs alone (its work
	// must not grow with the split: GenerateSeeds validated the seeds file).
	plan, err := a.slicePlan(in)
	if err != nil {
		return out, err
	}
	spec := plan.Spec
	if err := bake.CheckMemory(spec, max(1, a.Threads), a.MaxMemory); err != nil {
		return out, fatal(bakeapi.ErrInvalidConfig, "this worker cannot bake slice %d of split %s: %v", in.Slice, in.Split, err)
	}
	ids, err := a.sliceIdentities(ctx, in, plan.Salt, log, hb)
	if err != nil {
		return out, err
	}
	desc := a.Engine.Describe()

	hb.update(func(p *bakeapi.SliceProgress) { p.SamplesEach = spec.NSamples })
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go a.beat(ctx, runCtx, hb, stop)

	// Step 3. Every MLP of the slice, in order. One weights array serves
	// every MLP here and every row in step 4: a fresh one each time would
	// leave the collector a row of garbage per MLP (64 MiB at width 1024 ×
	// depth 16) and let the heap grow to twice the live rows.
	weights := make([]float32, spec.Depth*spec.Width*spec.Width)
	results := make([]mlpResult, 0, in.End-in.Start)
	for _, m := range ids {
		r, how, err := a.bakeMLP(runCtx, b, in, spec, m, weights, desc, hb, log)
		if err != nil {
			if cause := context.Cause(runCtx); cause != nil && ctx.Err() == nil {
				if errors.Is(cause, errStopping) {
					return out, hb.stopped(activity.GetInfo(ctx).Attempt)
				}
				return out, cause // stalled engine: a retryable error with its reason
			}
			return out, err
		}
		switch how {
		case metrics.Reused:
			out.Reused++
		case metrics.Resumed:
			out.Resumed++
		default:
			out.Computed++
		}
		a.Metrics.MLPDone(how)
		results = append(results, r)
		hb.update(func(p *bakeapi.SliceProgress) { p.DoneMLPs++ })
	}
	// Step 4. Assemble the partial dataset from the results (weights are recomputed:
	// they are a cheap pure function of the seed) and commit it.
	md := bake.Metadata(plan, desc, recordedOrNow(in.CreatedAt))
	sum, err := a.commitPartial(ctx, prefix, md, spec, id, func(write func(dataset.Row) error) error {
		for i, r := range results {
			row, err := resultRow(spec, ids[i], r, weights)
			if err != nil {
				return err
			}
			if err := write(row); err != nil {
				return err
			}
		}
		return nil
	})
	out.ManifestSHA256 = sum
	return out, err
}

// commitPartial writes a slice's partial dataset, its rows from produce, and
// commits it at prefix, returning its manifest's sha256. The partial is an
// intermediate that only the split's merge reads: its parquet file and
// metadata.json, no card.
func (a *Activities) commitPartial(ctx context.Context, prefix string, md dataset.Metadata, spec bakeapi.Spec, id seal.Seal, produce func(write func(dataset.Row) error) error) (string, error) {
	dir, err := a.scratch("slice-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	local := filepath.Join(dir, "partial")
	if err := dataset.WriteIntermediateStream(local, md, spec, produce); err != nil {
		return "", err
	}
	_, sum, err := commitDir(ctx, a.Store, local, prefix, id)
	return sum, err
}

// slicePlan is the slice's plan without its seeds: GenerateSeeds validated
// the seeds file, which the slice does not read (its work must not grow with
// the split); the identities of its range come from the identity blocks. A
// protocol-4.0 plan carries this worker's salt, checked against the declared
// SHA-256.
func (a *Activities) slicePlan(in bakeapi.BakeSliceInput) (bake.Plan, error) {
	p := bake.Plan{NMLPs: in.NMLPs, Seeds: bake.SeedFile{SHA256: in.SeedsSHA256}, Range: bakeapi.Range{Start: in.Start, End: in.End},
		Spec: in.Spec, Split: in.Split, Config: in.Config}
	if err := p.ValidateSettings(); err != nil {
		return bake.Plan{}, fatal(bakeapi.ErrInvalidConfig, "%v", err)
	}
	if err := p.Range.Validate(p.NMLPs); err != nil {
		return bake.Plan{}, fatal(bakeapi.ErrInvalidConfig, "%v", err)
	}
	if in.Spec.Protocol() == bakeapi.SeedProtocolV4 {
		var err error
		if p.Salt, err = workerSalt(in.Spec.Salt); err != nil {
			return bake.Plan{}, err
		}
	}
	return p, nil
}

// workerSalt is a protocol-4.0 bake's salt. It never travels through
// Temporal or S3 (the workflow input records only its SHA-256), so every GPU
// worker of such a bake is started with it in dataset.SaltEnv; a worker
// without it, or with another salt, fails the slice rather than derive other
// seeds and names.
func workerSalt(decl bakeapi.Salt) (seeds.Salt, error) {
	text := os.Getenv(dataset.SaltEnv)
	if text == "" {
		return seeds.Salt{}, fatal(bakeapi.ErrInvalidConfig, "this bake uses seed protocol 4.0 with the salt of SHA-256 %s, but this worker's %s is not set: "+
			"start the bake's GPU workers with the salt in %[2]s (route the bake to them with bake.gpu-queue) and restart the bake", decl.SHA256, dataset.SaltEnv)
	}
	salt, err := seeds.ParseSalt(text)
	if err != nil {
		return seeds.Salt{}, fatal(bakeapi.ErrInvalidConfig, "this worker's %s %v", dataset.SaltEnv, err)
	}
	if salt.Digest() != decl.SHA256 {
		return seeds.Salt{}, fatal(bakeapi.ErrInvalidConfig, "this worker's %s has SHA-256 %s, but the bake's salt has %s: start the bake's GPU workers with its salt and restart the bake",
			dataset.SaltEnv, salt.Digest(), decl.SHA256)
	}
	return salt, nil
}

// bakeMLP returns the MLP's result, from the store if an earlier attempt
// finished it, else by running the engine from its last checkpoint.
func (a *Activities) bakeMLP(ctx context.Context, b keys.Bake, in bakeapi.BakeSliceInput, spec bakeapi.Spec, m bake.MLP, weights []float32, desc gpuengine.Description, hb *heartbeat, log tlog.Logger) (mlpResult, string, error) {
	resKey := b.MLPResult(in.Split, m.Index)
	hb.update(func(p *bakeapi.SliceProgress) { p.CurrentMLP, p.SamplesDone = m.Index, 0 })
	// A stored result or checkpoint is used only if it is intact and this
	// split's; a damaged one is discarded and the MLP computed again (a
	// result) or from its start (a checkpoint).
	var r mlpResult
	switch _, err := a.Store.GetSealed(ctx, resKey, &r, &r.Seal, sliceSeal(in, resKey)); {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, seal.ErrOtherSpec), err == nil && !sameSpec(in, r.Fingerprint):
		return r, "", mismatch("result", resKey, m.Index)
	case err != nil && !damaged(err):
		return mlpResult{}, "", storeErr(err)
	default:
		switch {
		case err == nil && r.Algorithm != spec.Algorithm():
			return r, "", fatal(bakeapi.ErrFingerprintMismatch, "%s was computed with %s, this bake uses %s", resKey, r.Algorithm, spec.Algorithm())
		case err == nil && (r.MLP != m.Index || r.Seed != m.Seed || len(r.LayerMeansBits) != spec.Width*spec.Depth):
			err = fmt.Errorf("%s is not the result of MLP %d (seed %d) with %d means: %w", resKey, m.Index, m.Seed, spec.Width*spec.Depth, seal.ErrDamaged)
		}
		if err == nil {
			return r, metrics.Reused, nil
		}
		if err := a.discard(ctx, log, hb, resKey, err); err != nil {
			return mlpResult{}, "", err
		}
	}
	how := metrics.Computed
	var resume *gpuengine.Checkpoint
	ckKey := b.MLPCheckpoint(in.Split, m.Index)
	var cp storedCheckpoint
	switch _, err := a.Store.GetSealed(ctx, ckKey, &cp, &cp.Seal, sliceSeal(in, ckKey)); {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, seal.ErrOtherSpec), err == nil && !sameSpec(in, cp.Fingerprint):
		return mlpResult{}, "", mismatch("checkpoint", ckKey, m.Index)
	case err != nil && !damaged(err):
		return mlpResult{}, "", storeErr(err)
	case err == nil && cp.Algorithm != spec.Algorithm():
		return mlpResult{}, "", fatal(bakeapi.ErrFingerprintMismatch, "checkpoint %s is for %s, this bake uses %s: delete it to restart MLP %d", ckKey, cp.Algorithm, spec.Algorithm(), m.Index)
	case err == nil:
		resume, how = &cp.Checkpoint, metrics.Resumed
	default:
		if err := a.discard(ctx, log, hb, ckKey, err); err != nil {
			return mlpResult{}, "", err
		}
	}
	w, err := seeds.WeightsInto(weights, spec.Width, spec.Depth, m.Streams.Weight)
	if err != nil {
		return mlpResult{}, "", fatal(bakeapi.ErrInvalidConfig, "%v", err)
	}
	var startSamples int64
	if resume != nil {
		startSamples = resume.SamplesDone
	}
	// Effective FLOPs: one multiply-add per weight per sample.
	prog := a.Metrics.Engine(desc.Engine, desc.Device, 2*float64(spec.Width)*float64(spec.Width)*float64(spec.Depth), startSamples)
	defer prog.Done()
	mlpStart := time.Now()
	// Checkpoints are saved every checkpointEvery, and once more when the engine is
	// stopped, so a stop loses nothing and a crash at most checkpointEvery of work;
	// an MLP that finishes sooner costs no checkpoint at all.
	lastSave, saved := time.Now(), false
	var pending []byte
	save := func() error {
		if pending == nil {
			return nil
		}
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err := a.Store.Put(saveCtx, ckKey, pending)
		pending, lastSave, saved = nil, time.Now(), true
		if err == nil {
			prog.Checkpointed()
			hb.saved()
		}
		return err
	}
	res, err := a.Engine.BakeMLP(ctx, spec, gpuengine.Job{Weights: w, Sample: m.Streams.Sample, Threads: max(1, a.Threads)}, resume, func(cp gpuengine.Checkpoint) {
		hb.update(func(p *bakeapi.SliceProgress) { p.SamplesDone = cp.SamplesDone })
		hb.progressed()
		prog.Samples(cp.SamplesDone)
		if cp.SamplesDone == spec.NSamples {
			pending = nil // the result object follows at once
			return
		}
		sc := storedCheckpoint{Fingerprint: in.Fingerprint, Checkpoint: cp}
		pending, _ = seal.Marshal(&sc, &sc.Seal, sliceSeal(in, ckKey))
		if time.Since(lastSave) >= a.checkpointEvery() {
			if err := save(); err != nil {
				log.Warn("checkpoint save failed", "MLP", m.Index, "Error", err)
			}
		}
	})
	if err != nil {
		if errors.Is(err, gpuengine.ErrBadCheckpoint) {
			return mlpResult{}, "", fatal(bakeapi.ErrCorruptPartial, "checkpoint %s: %v", ckKey, err)
		}
		if serr := save(); serr != nil {
			log.Warn("checkpoint save on stop failed", "MLP", m.Index, "Error", serr)
		}
		return mlpResult{}, "", err
	}
	r = mlpResult{MLP: m.Index, Seed: m.Seed, Algorithm: spec.Algorithm(), Engine: desc.Engine + "/" + desc.Kernel, Device: desc.Device,
		AvgVarBits: math.Float64bits(res.AvgVariance), Fingerprint: in.Fingerprint}
	for _, v := range res.LayerMeans {
		r.LayerMeansBits = append(r.LayerMeansBits, math.Float32bits(v))
	}
	data, err := seal.Marshal(&r, &r.Seal, sliceSeal(in, resKey))
	if err != nil {
		return mlpResult{}, "", err
	}
	if err := a.Store.PutCreate(ctx, resKey, data); err != nil && !errors.Is(err, store.ErrExists) {
		return mlpResult{}, "", storeErr(err)
	}
	hb.saved()
	// A concurrent attempt may have stored it first; results are deterministic, so either copy is the result.
	if resume != nil || saved {
		_ = a.Store.Delete(ctx, ckKey)
	}
	log.Info("MLP done", "MLP", m.Index, "How", how, "FromSample", startSamples, "Seconds", time.Since(mlpStart).Seconds())
	return r, how, nil
}

// resultRow is MLP m's row from its stored result, its weights recomputed
// into weights.
func resultRow(spec bakeapi.Spec, m bake.MLP, r mlpResult, weights []float32) (dataset.Row, error) {
	w, err := seeds.WeightsInto(weights, spec.Width, spec.Depth, m.Streams.Weight)
	if err != nil {
		return dataset.Row{}, err
	}
	if len(r.LayerMeansBits) != spec.Width*spec.Depth {
		return dataset.Row{}, fatal(bakeapi.ErrCorruptPartial, "result of MLP %d has %d means, want %d", r.MLP, len(r.LayerMeansBits), spec.Width*spec.Depth)
	}
	means := make([]float32, len(r.LayerMeansBits))
	for i, b := range r.LayerMeansBits {
		means[i] = math.Float32frombits(b)
	}
	return dataset.Row{MLPID: int32(m.Index), Name: m.Name, Seed: m.Seed, Weights: w, LayerMeans: means,
		FinalMeans:  append([]float32(nil), means[len(means)-spec.Width:]...),
		AvgVariance: math.Float64frombits(r.AvgVarBits), Breakdown: bake.Breakdown(spec)}, nil
}

// heartbeat is the slice's live progress, shared by the engine callback and the ticker.
type heartbeat struct {
	mu   sync.Mutex
	p    bakeapi.SliceProgress
	last time.Time
	// stored counts the checkpoints and results this attempt stored: what
	// a stop keeps of its work.
	stored int
}

// errStopping is the cause beat gives the engine's context when the worker
// shuts down; the slice then reports it with what the attempt saved.
var errStopping = errors.New("worker is shutting down")

func (h *heartbeat) saved() {
	h.mu.Lock()
	h.stored++
	h.mu.Unlock()
}

// stopped is the error of an attempt its worker stopped, after its last
// checkpoint was saved: retryable, and detailed with whether it saved any
// progress, which the split workflow reads to decide what the stop costs.
func (h *heartbeat) stopped(attempt int32) error {
	h.mu.Lock()
	stop := bakeapi.SliceStop{Attempt: attempt, Saved: h.stored > 0}
	h.mu.Unlock()
	msg := "worker is shutting down; the slice is handed back and resumes from its checkpoints on another worker"
	if !stop.Saved {
		msg = "worker is shutting down before this attempt saved any progress; the slice is handed back"
	}
	return temporal.NewApplicationErrorWithOptions(msg, bakeapi.ErrWorkerStopping,
		temporal.ApplicationErrorOptions{NextRetryDelay: time.Second, Details: []any{stop}})
}

func (h *heartbeat) update(f func(*bakeapi.SliceProgress)) {
	h.mu.Lock()
	f(&h.p)
	h.mu.Unlock()
}

func (h *heartbeat) progressed() {
	h.mu.Lock()
	h.last = time.Now()
	h.mu.Unlock()
}

func (h *heartbeat) snapshot() (bakeapi.SliceProgress, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.p, h.last
}

// beat heartbeats on a ticker (a quarter of the heartbeat timeout), stops the
// engine when the worker is shutting down, and fails a stalled engine.
func (a *Activities) beat(ctx, runCtx context.Context, h *heartbeat, stop context.CancelCauseFunc) {
	interval := 5 * time.Second
	if t := activity.GetInfo(ctx).HeartbeatTimeout; t > 0 {
		interval = max(100*time.Millisecond, t/4)
	}
	h.progressed()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	stopping := activity.GetWorkerStopChannel(ctx)
	for {
		select {
		case <-runCtx.Done():
			return
		case <-stopping:
			stop(errStopping)
			return
		case <-tick.C:
			p, last := h.snapshot()
			if time.Since(last) > a.stallTimeout() {
				stop(temporal.NewApplicationErrorWithOptions(fmt.Sprintf("engine made no progress for %s on MLP %d", a.stallTimeout(), p.CurrentMLP),
					bakeapi.ErrEngineStalled, temporal.ApplicationErrorOptions{NextRetryDelay: time.Second}))
				return
			}
			activity.RecordHeartbeat(ctx, p)
		}
	}
}
