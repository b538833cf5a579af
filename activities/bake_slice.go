package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/metrics"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
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
	// The seal holds it too.
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
// split and spec fingerprint. An input without a fingerprint keeps the
// algorithm check alone.
func sliceSeal(in bakeapi.BakeSliceInput, key string) seal.Seal {
	return seal.Seal{
		Key:         key,
		Bake:        in.BakeID,
		Split:       in.Split,
		Fingerprint: in.Fingerprint,
	}
}

// mismatch is the refusal of an object computed for another spec of this bake ID.
func mismatch(what, key string, mlp int) error {
	return fatal(
		bakeapi.ErrFingerprintMismatch,
		"%s %s was computed for another spec than this bake's "+
			"(a different config under the same bake ID): it is never reused; "+
			"start the bake under a new --id, or delete %s to recompute MLP %d",
		what,
		key,
		key,
		mlp,
	)
}

// discard drops a damaged object that the slice recomputes: a result, a
// checkpoint, an identity block or its own uncommitted partial's manifest.
// It is logged, counted in whestbake_damaged_objects_total and in the
// slice's Discarded, which status shows, and deleted, so that its create-only
// replacement can be written. Retrying the read instead would fail the same
// way until the slice's attempts ran out.
func (a *Activities) discard(
	ctx context.Context,
	log tlog.Logger,
	hb *heartbeat,
	key string,
	err error,
) error {
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
// Every log line of the attempt carries BakeID, Split, Slice and, from the
// SDK's activity logger, Attempt, so one slice's story can be grepped out of
// a fleet's logs.
func (a *Activities) BakeSlice(
	ctx context.Context,
	in bakeapi.BakeSliceInput,
) (bakeapi.BakeSliceOutput, error) {
	info := activity.GetInfo(ctx)
	log := tlog.With(
		activity.GetLogger(ctx),
		"BakeID", in.BakeID,
		"Split", in.Split,
		"Slice", in.Slice,
	)
	log.Info(
		"slice started",
		"MLPs", fmt.Sprintf("%d-%d", in.Start, in.End-1),
		"Engine", a.Engine.Describe().Engine,
	)
	end := a.Metrics.SliceStarted(info.Attempt)
	start := time.Now()
	out, err := a.bakeSlice(ctx, in, log)
	end(err)
	if err != nil {
		what := "slice attempt failed"
		if metrics.ErrorType(err) == bakeapi.ErrWorkerStopping {
			what = "slice handed back: this worker is stopping"
		}
		log.Warn(
			what,
			"Error", err,
			"ErrorType", metrics.ErrorType(err),
			"Seconds", time.Since(start).Seconds(),
		)
		return out, err
	}
	outcome := rows.SliceOutcome(out.Computed, out.Resumed, out.Reused, in.End-in.Start)
	a.Metrics.SliceDone(outcome)
	log.Info(
		"slice committed",
		"Outcome", outcome,
		"Computed", out.Computed,
		"Resumed", out.Resumed,
		"Reused", out.Reused,
		"Discarded", out.Discarded,
		"Seconds", time.Since(start).Seconds(),
	)
	return out, nil
}

// sliceRun is one attempt at a slice. Its methods are the attempt's steps:
// committed, when an earlier attempt finished it; prepare, its plan and
// identities; then per MLP reuse a stored result, resume a stored
// checkpoint, compute with the engine and save the result; and commit its
// partial dataset.
type sliceRun struct {
	acts      *Activities
	in        bakeapi.BakeSliceInput
	bakeKeys  keys.Bake
	prefix    string
	heartbeat *heartbeat
	log       tlog.Logger

	// Set by prepare.
	plan rows.Plan
	desc gpuengine.Description
	// weights serves every MLP and every row of the attempt: a fresh array
	// each time would leave the collector a row of garbage per MLP, 64 MiB
	// at width 1024 × depth 16, and let the heap grow to twice the live rows.
	weights []float32
	// Set when the MLPs' run starts.
	checkpoints *checkpointer
}

func (a *Activities) bakeSlice(
	ctx context.Context,
	in bakeapi.BakeSliceInput,
	log tlog.Logger,
) (out bakeapi.BakeSliceOutput, _ error) {
	bakeKeys := keys.Bake(in.BakeID)
	r := &sliceRun{
		acts:     a,
		in:       in,
		bakeKeys: bakeKeys,
		prefix:   bakeKeys.Slice(in.Split, in.Slice),
		heartbeat: &heartbeat{progress: bakeapi.SliceProgress{
			Split:     in.Split,
			Slice:     in.Slice,
			TotalMLPs: in.End - in.Start,
		}},
		log: log,
	}
	out.Prefix = r.prefix
	defer func() { p, _ := r.heartbeat.snapshot(); out.Discarded = p.Discarded }()
	if sum, done, err := r.committed(ctx); err != nil {
		return out, err
	} else if done {
		out.ManifestSHA256 = sum
		out.Reused = in.End - in.Start
		return out, nil
	}
	ids, err := r.prepare(ctx)
	if err != nil {
		return out, err
	}
	r.heartbeat.update(func(p *bakeapi.SliceProgress) { p.SamplesEach = r.plan.Spec.NSamples })
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.checkpoints = r.newCheckpointer(stop)
	go a.beat(ctx, runCtx, r.heartbeat, stop)

	// Every MLP of the slice, in order; then the partial dataset from their
	// results.
	results := make([]mlpResult, 0, in.End-in.Start)
	for _, m := range ids {
		res, how, err := r.mlp(runCtx, m)
		if err != nil {
			return out, r.failure(ctx, runCtx, err)
		}
		switch how {
		case rows.Reused:
			out.Reused++
		case rows.Resumed:
			out.Resumed++
		default:
			out.Computed++
		}
		a.Metrics.MLPDone(how)
		results = append(results, res)
		r.heartbeat.update(func(p *bakeapi.SliceProgress) { p.DoneMLPs++ })
	}
	if out.ManifestSHA256, err = r.commit(runCtx, ids, results); err != nil {
		return out, r.failure(ctx, runCtx, err)
	}
	return out, nil
}

// failure is the attempt's error for err, which a step of its run, with ctx
// derived as runCtx, returned: the cause the run was stopped with, if it
// was, else err. Such causes are the worker stopping, a stall or S3
// failing: retryable errors with their reasons.
func (r *sliceRun) failure(ctx, runCtx context.Context, err error) error {
	cause := context.Cause(runCtx)
	switch {
	case cause == nil || ctx.Err() != nil:
		return err
	case errors.Is(cause, errStopping):
		return r.heartbeat.stopped(activity.GetInfo(ctx).Attempt)
	}
	return cause
}

// committed reports whether an earlier attempt committed the slice, and
// its manifest's sha256. The commit is checked where it is reused, as the
// merge checks it: its manifest, and every file it lists read back against
// the sha256 there. A commit that fails (a file rewritten or deleted since)
// is dropped, and the partial written again from the results, which the
// merge would otherwise refuse on every restart.
func (r *sliceRun) committed(ctx context.Context) (string, bool, error) {
	m, sum, done, err := committed(ctx, r.acts.Store, r.prefix, sliceSeal(r.in, ""))
	if done {
		err = r.checkFiles(ctx, m)
	}
	if damaged(err) {
		return "", false, r.acts.discard(ctx, r.log, r.heartbeat, keys.Manifest(r.prefix), err)
	}
	return sum, done && err == nil, err
}

// checkFiles reads back every file of the slice's committed manifest m,
// heartbeating as the bytes come (a partial can be gigabytes), and returns
// an error for which damaged holds if one is unlike its entry or gone.
func (r *sliceRun) checkFiles(ctx context.Context, m manifest.Manifest) error {
	progress := func(int64) {
		p, _ := r.heartbeat.snapshot()
		activityHeartbeat(ctx, p)
	}
	for _, f := range m.Files {
		key := path.Join(r.prefix, f.Path)
		switch err := r.acts.Store.Check(ctx, key, f.SHA256, progress); {
		case errors.Is(err, store.ErrCorrupt):
			return fmt.Errorf("%s does not match the slice's manifest: %w", key, err)
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("%s, which the slice's manifest lists, is gone: %w",
				key, seal.ErrDamaged)
		case err != nil:
			return storeErr(err)
		}
	}
	return nil
}

// prepare sets the slice's plan and returns the identities of its MLPs
// alone (its work must not grow with the split: GenerateSeeds validated the
// seeds file).
func (r *sliceRun) prepare(ctx context.Context) ([]mlps.MLP, error) {
	plan, err := r.acts.slicePlan(r.in)
	if err != nil {
		return nil, err
	}
	spec := plan.Spec
	if err := rows.CheckMemory(spec, max(1, r.acts.Threads), r.acts.MaxMemory); err != nil {
		return nil, fatal(
			bakeapi.ErrInvalidConfig,
			"this worker cannot bake slice %d of split %s: %v",
			r.in.Slice,
			r.in.Split,
			err,
		)
	}
	ids, err := r.acts.sliceIdentities(ctx, r.in, plan.Salt, r.log, r.heartbeat)
	if err != nil {
		return nil, err
	}
	r.plan = plan
	r.desc = r.acts.Engine.Describe()
	r.weights = make([]float32, spec.Depth*spec.Width*spec.Width)
	return ids, nil
}

// commit assembles the partial dataset from the results (weights are
// recomputed: they are a cheap pure function of the seed) and commits it,
// returning its manifest's sha256.
func (r *sliceRun) commit(
	ctx context.Context,
	ids []mlps.MLP,
	results []mlpResult,
) (string, error) {
	spec := r.plan.Spec
	md := rows.Metadata(r.plan, r.desc, recordedOrNow(r.in.CreatedAt))
	defer r.waitS3("commit of the partial dataset", r.prefix+"/")()
	id := sliceSeal(r.in, "")
	rows := func(write func(dataset.Row) error) error {
		for i, res := range results {
			row, err := resultRow(spec, ids[i], res, r.weights)
			if err != nil {
				return err
			}
			if err := write(row); err != nil {
				return err
			}
		}
		return nil
	}
	return r.acts.commitPartial(ctx, r.prefix, md, spec, id, rows)
}

// commitPartial writes a slice's partial dataset, its rows from produce, and
// commits it at prefix, returning its manifest's sha256. The partial is an
// intermediate that only the split's merge reads: its parquet shards and
// metadata.json, no card.
func (a *Activities) commitPartial(
	ctx context.Context,
	prefix string,
	md dataset.Metadata,
	spec bakeapi.Spec,
	id seal.Seal,
	produce func(write func(dataset.Row) error) error,
) (string, error) {
	dir, err := a.scratch("slice-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	local := filepath.Join(dir, "partial")
	if err := dataset.WriteIntermediateStream(local, md, spec, produce); err != nil {
		return "", err
	}
	_, sum, err := commitDir(ctx, a.Store, commit{dir: local, prefix: prefix, id: id})
	return sum, err
}

// slicePlan is the slice's plan without its seeds: GenerateSeeds validated
// the seeds file, which the slice does not read (its work must not grow with
// the split); the identities of its range come from the identity blocks. A
// protocol-4.0 plan carries this worker's salt, checked against the declared
// SHA-256.
func (a *Activities) slicePlan(in bakeapi.BakeSliceInput) (rows.Plan, error) {
	p := rows.Plan{
		NMLPs:  in.NMLPs,
		Seeds:  mlps.SeedFile{SHA256: in.SeedsSHA256},
		Range:  bakeapi.Range{Start: in.Start, End: in.End},
		Spec:   in.Spec,
		Split:  in.Split,
		Config: in.Config,
	}
	if err := p.ValidateSettings(); err != nil {
		return rows.Plan{}, fatal(bakeapi.ErrInvalidConfig, "%v", err)
	}
	if err := p.Range.Validate(p.NMLPs); err != nil {
		return rows.Plan{}, fatal(bakeapi.ErrInvalidConfig, "%v", err)
	}
	if in.Spec.Protocol() == bakeapi.SeedProtocolV4 {
		var err error
		if p.Salt, err = a.workerSalt(in.Spec.Salt); err != nil {
			return rows.Plan{}, err
		}
	}
	return p, nil
}

// workerSalt is a protocol-4.0 bake's salt. It never travels through
// Temporal or S3 (the workflow input records only its SHA-256), so every GPU
// worker of such a bake is started with it (Activities.Salt); a worker
// without it, or with another salt, fails the slice rather than derive other
// seeds and names.
func (a *Activities) workerSalt(decl bakeapi.Salt) (seeds.Salt, error) {
	s, err := seeds.Salt{}, mlps.ErrSaltUnset
	if a.Salt != nil {
		s, err = a.Salt()
	}
	switch {
	case errors.Is(err, mlps.ErrSaltUnset):
		return seeds.Salt{}, fatal(
			bakeapi.ErrInvalidConfig,
			"this bake uses seed protocol 4.0 with the salt of SHA-256 %s, "+
				"but this worker's %s is not set: "+
				"start the bake's GPU workers with the salt in %[2]s "+
				"(route the bake to them with bake.gpu-queue) and restart the bake",
			decl.SHA256,
			dataset.SaltEnv,
		)
	case err != nil:
		return seeds.Salt{}, fatal(bakeapi.ErrInvalidConfig, "this worker's %v", err)
	case s.Digest() != decl.SHA256:
		return seeds.Salt{}, fatal(
			bakeapi.ErrInvalidConfig,
			"this worker's %s has SHA-256 %s, but the bake's salt has %s: "+
				"start the bake's GPU workers with its salt and restart the bake",
			dataset.SaltEnv,
			s.Digest(),
			decl.SHA256,
		)
	}
	return s, nil
}

// mlp returns MLP m's result and how this attempt got it: reused from the
// store if an earlier attempt finished it, else computed by the engine,
// resumed from the MLP's last checkpoint if it has one.
func (r *sliceRun) mlp(ctx context.Context, m mlps.MLP) (mlpResult, rows.Outcome, error) {
	r.heartbeat.update(func(p *bakeapi.SliceProgress) {
		p.CurrentMLP = m.Index
		p.SamplesDone = 0
	})
	if res, ok, err := r.reuse(ctx, m); err != nil || ok {
		return res, rows.Reused, err
	}
	resume, err := r.resume(ctx, m)
	if err != nil {
		return mlpResult{}, "", err
	}
	how := rows.Computed
	if resume != nil {
		how = rows.Resumed
	}
	start := time.Now()
	stats, checkpointed, err := r.compute(ctx, m, resume)
	if err != nil {
		return mlpResult{}, "", err
	}
	res, err := r.save(ctx, m, stats, resume != nil || checkpointed)
	if err != nil {
		return mlpResult{}, "", err
	}
	var from int64
	if resume != nil {
		from = resume.SamplesDone
	}
	r.log.Info(
		"MLP done",
		"MLP", m.Index,
		"How", how,
		"FromSample", from,
		"Seconds", time.Since(start).Seconds(),
	)
	return res, how, nil
}

// reuse returns MLP m's stored result, if an earlier attempt stored one. A
// stored result is used only if it is intact and this split's; a damaged
// one is discarded and the MLP computed again.
func (r *sliceRun) reuse(ctx context.Context, m mlps.MLP) (mlpResult, bool, error) {
	spec := r.plan.Spec
	key := r.bakeKeys.MLPResult(r.in.Split, m.Index)
	var res mlpResult
	done := r.waitS3("get", key)
	_, err := r.acts.Store.GetSealed(ctx, key, &res, &res.Seal, sliceSeal(r.in, key))
	done()
	switch {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, seal.ErrOtherSpec), err == nil && !sameSpec(r.in, res.Fingerprint):
		return res, false, mismatch("result", key, m.Index)
	case err != nil && !damaged(err):
		return mlpResult{}, false, storeErr(err)
	default:
		switch {
		case err == nil && res.Algorithm != spec.Algorithm():
			return res, false, fatal(
				bakeapi.ErrFingerprintMismatch,
				"%s was computed with %s, this bake uses %s",
				key,
				res.Algorithm,
				spec.Algorithm(),
			)
		case err == nil && (res.MLP != m.Index ||
			res.Seed != m.Seed ||
			len(res.LayerMeansBits) != spec.Width*spec.Depth):
			err = fmt.Errorf(
				"%s is not the result of MLP %d (seed %d) with %d means: %w",
				key,
				m.Index,
				m.Seed,
				spec.Width*spec.Depth,
				seal.ErrDamaged,
			)
		}
		if err == nil {
			return res, true, nil
		}
		if err := r.acts.discard(ctx, r.log, r.heartbeat, key, err); err != nil {
			return mlpResult{}, false, err
		}
	}
	return mlpResult{}, false, nil
}

// resume returns MLP m's stored checkpoint, nil if it has none. A stored
// checkpoint is used only if it is intact and this split's; a damaged one
// is discarded and the MLP computed from its start.
func (r *sliceRun) resume(ctx context.Context, m mlps.MLP) (*gpuengine.Checkpoint, error) {
	spec := r.plan.Spec
	key := r.bakeKeys.MLPCheckpoint(r.in.Split, m.Index)
	var cp storedCheckpoint
	done := r.waitS3("get", key)
	_, err := r.acts.Store.GetSealed(ctx, key, &cp, &cp.Seal, sliceSeal(r.in, key))
	done()
	switch {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, seal.ErrOtherSpec), err == nil && !sameSpec(r.in, cp.Fingerprint):
		return nil, mismatch("checkpoint", key, m.Index)
	case err != nil && !damaged(err):
		return nil, storeErr(err)
	case err == nil && cp.Algorithm != spec.Algorithm():
		return nil, fatal(
			bakeapi.ErrFingerprintMismatch,
			"checkpoint %s is for %s, this bake uses %s: delete it to restart MLP %d",
			key,
			cp.Algorithm,
			spec.Algorithm(),
			m.Index,
		)
	case err == nil:
		return &cp.Checkpoint, nil
	default:
		if err := r.acts.discard(ctx, r.log, r.heartbeat, key, err); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// compute runs the engine on MLP m from resume (nil: from its start), its
// checkpoints kept by the attempt's checkpointer, and reports whether a
// checkpoint of it may be stored.
func (r *sliceRun) compute(
	ctx context.Context,
	m mlps.MLP,
	resume *gpuengine.Checkpoint,
) (gpuengine.Result, bool, error) {
	spec := r.plan.Spec
	key := r.bakeKeys.MLPCheckpoint(r.in.Split, m.Index)
	w, err := rows.Weights(spec, m, r.weights)
	if err != nil {
		return gpuengine.Result{}, false, fatal(bakeapi.ErrInvalidConfig, "%v", err)
	}
	var startSamples int64
	if resume != nil {
		startSamples = resume.SamplesDone
	}
	// Effective FLOPs: one multiply-add per weight per sample.
	flops := 2 * float64(spec.Width) * float64(spec.Width) * float64(spec.Depth)
	progress := r.acts.Metrics.Engine(r.desc.Engine, r.desc.Device, flops, startSamples)
	defer progress.Done()
	cps := r.checkpoints
	cps.begin(m.Index, key, progress)
	job := gpuengine.Job{Weights: w, Sample: m.Streams.Sample, Threads: max(1, r.acts.Threads)}
	res, err := r.acts.Engine.BakeMLP(ctx, spec, job, resume, func(cp gpuengine.Checkpoint) {
		r.heartbeat.update(func(p *bakeapi.SliceProgress) { p.SamplesDone = cp.SamplesDone })
		r.heartbeat.progressed()
		progress.Samples(cp.SamplesDone)
		cps.offer(ctx, cp)
	})
	if err != nil {
		if errors.Is(err, gpuengine.ErrBadCheckpoint) {
			return gpuengine.Result{}, false, fatal(
				bakeapi.ErrCorruptPartial,
				"checkpoint %s: %v",
				key,
				err,
			)
		}
		cps.flush(ctx)
		return gpuengine.Result{}, false, err
	}
	return res, cps.tried, nil
}

// save stores MLP m's result create-only and, when the MLP has a stored
// checkpoint (hasCheckpoint), deletes it. A concurrent attempt may have
// stored the result first; results are deterministic, so either copy is the
// result.
func (r *sliceRun) save(
	ctx context.Context,
	m mlps.MLP,
	stats gpuengine.Result,
	hasCheckpoint bool,
) (mlpResult, error) {
	key := r.bakeKeys.MLPResult(r.in.Split, m.Index)
	res := mlpResult{
		MLP:         m.Index,
		Seed:        m.Seed,
		Algorithm:   r.plan.Spec.Algorithm(),
		Engine:      r.desc.Engine + "/" + r.desc.Kernel,
		Device:      r.desc.Device,
		AvgVarBits:  math.Float64bits(stats.AvgVariance),
		Fingerprint: r.in.Fingerprint,
	}
	for _, v := range stats.LayerMeans {
		res.LayerMeansBits = append(res.LayerMeansBits, math.Float32bits(v))
	}
	data, err := seal.Marshal(&res, &res.Seal, sliceSeal(r.in, key))
	if err != nil {
		return mlpResult{}, err
	}
	done := r.waitS3("create", key)
	err = r.acts.Store.PutCreate(ctx, key, data)
	done()
	if err != nil && !errors.Is(err, store.ErrExists) {
		return mlpResult{}, storeErr(err)
	}
	r.heartbeat.saved()
	if hasCheckpoint {
		cp := r.bakeKeys.MLPCheckpoint(r.in.Split, m.Index)
		defer r.waitS3("delete", cp)()
		_ = r.acts.Store.Delete(ctx, cp)
	}
	return res, nil
}

// resultRow is MLP m's row from its stored result, its weights recomputed
// into weights.
func resultRow(spec bakeapi.Spec, m mlps.MLP, r mlpResult, weights []float32) (dataset.Row, error) {
	w, err := rows.Weights(spec, m, weights)
	if err != nil {
		return dataset.Row{}, err
	}
	if len(r.LayerMeansBits) != spec.Width*spec.Depth {
		return dataset.Row{}, fatal(
			bakeapi.ErrCorruptPartial,
			"result of MLP %d has %d means, want %d",
			r.MLP,
			len(r.LayerMeansBits),
			spec.Width*spec.Depth,
		)
	}
	stats := gpuengine.Result{
		LayerMeans:  make([]float32, len(r.LayerMeansBits)),
		AvgVariance: math.Float64frombits(r.AvgVarBits),
	}
	for i, b := range r.LayerMeansBits {
		stats.LayerMeans[i] = math.Float32frombits(b)
	}
	return rows.NewRow(spec, m, w, stats), nil
}

// waitS3 notes that the attempt waits on an S3 request (op on key) until
// the returned done is called, so that a stall names S3.
func (r *sliceRun) waitS3(op, key string) (done func()) {
	return r.heartbeat.waitingOnS3(r.acts.Store, op, key)
}

// heartbeat is the slice's live progress, shared by the engine callback and
// the ticker.
type heartbeat struct {
	mu       sync.Mutex
	progress bakeapi.SliceProgress
	// lastProgress is when the engine last reported samples done.
	lastProgress time.Time
	// stored counts the checkpoints and results this attempt stored: what
	// a stop keeps of its work.
	stored int
	// s3Request is the S3 request the attempt waits on ("" when none), since
	// s3Since.
	s3Request string
	s3Since   time.Time
}

// waitingOnS3 records that the attempt waits on an S3 request (op on key
// in st) until done is called.
func (h *heartbeat) waitingOnS3(st *store.Store, op, key string) (done func()) {
	what := op + " " + uri(st, key)
	h.mu.Lock()
	h.s3Request = what
	h.s3Since = time.Now()
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.s3Request = ""
		h.mu.Unlock()
	}
}

// stalled is the error of an attempt that made no progress for timeout:
// S3's when a request to it is what the attempt waits on (the engine does
// not run meanwhile), else the engine's.
func (h *heartbeat) stalled(timeout time.Duration) error {
	h.mu.Lock()
	mlp := h.progress.CurrentMLP
	what := h.s3Request
	since := h.s3Since
	h.mu.Unlock()
	if what != "" {
		msg := fmt.Sprintf(
			"no progress for %s on MLP %d: an S3 request (%s) has not returned for %s; "+
				"this worker cannot reach S3, so the attempt ends and the slice is retried "+
				"(check s3.endpoint and the network to it)",
			timeout,
			mlp,
			what,
			time.Since(since).Round(time.Second),
		)
		return temporal.NewApplicationError(msg, bakeapi.ErrStoreUnavailable)
	}
	return temporal.NewApplicationErrorWithOptions(
		fmt.Sprintf("engine made no progress for %s on MLP %d", timeout, mlp),
		bakeapi.ErrEngineStalled,
		temporal.ApplicationErrorOptions{NextRetryDelay: time.Second},
	)
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
	msg := "worker is shutting down; the slice is handed back and resumes from its checkpoints " +
		"on another worker"
	if !stop.Saved {
		msg = "worker is shutting down before this attempt saved any progress; " +
			"the slice is handed back"
	}
	// Benign: the SDK logs it at debug, not as an ERROR that log alerts
	// would raise on every roll-out; BakeSlice logs the hand-back at WARN.
	return temporal.NewApplicationErrorWithOptions(msg, bakeapi.ErrWorkerStopping,
		temporal.ApplicationErrorOptions{
			NextRetryDelay: time.Second,
			Details:        []any{stop},
			Category:       temporal.ApplicationErrorCategoryBenign,
		})
}

func (h *heartbeat) update(f func(*bakeapi.SliceProgress)) {
	h.mu.Lock()
	f(&h.progress)
	h.mu.Unlock()
}

func (h *heartbeat) progressed() {
	h.mu.Lock()
	h.lastProgress = time.Now()
	h.mu.Unlock()
}

func (h *heartbeat) snapshot() (bakeapi.SliceProgress, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.progress, h.lastProgress
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
				stop(h.stalled(a.stallTimeout()))
				return
			}
			activity.RecordHeartbeat(ctx, p)
		}
	}
}
