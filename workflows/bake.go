// Package workflows holds the bake DAG: BakeWorkflow runs the seeds, one
// child per split with its merge beside it, the combine and the push, and
// SplitWorkflow fans out the split's slices. Only
// keys, counts and sha256s travel through Temporal; the bytes live in MinIO.
package workflows

import (
	"fmt"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// Typed keys of bakeapi's search attributes.
var (
	bakeIDKey    = temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeIDAttribute)
	bakeStageKey = temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeStageAttribute)
)

// BakeWorkflow runs a whole bake: the seeds of every split, one
// SplitWorkflow per split with the merge of its slices beside it, the
// combined dataset, then the release and the Hub push the input asks for.
func BakeWorkflow(ctx workflow.Context, in bakeapi.BakeInput) (bakeapi.BakeOutput, error) {
	b, err := newBakeRun(ctx, in)
	if err != nil {
		return bakeapi.BakeOutput{}, err
	}
	seeds, err := b.seeds(ctx)
	if err != nil {
		return b.out, err
	}
	merged, err := b.splits(ctx, seeds)
	if err != nil {
		return b.out, err
	}
	if err := b.combine(ctx, merged); err != nil {
		return b.out, err
	}
	if err := b.release(ctx); err != nil {
		return b.out, err
	}
	if err := b.hubPush(ctx); err != nil {
		return b.out, err
	}
	return b.out, b.done(ctx)
}

// bakeRun is a BakeWorkflow's state; each stage is a method, run in the
// order BakeWorkflow reads.
type bakeRun struct {
	in   bakeapi.BakeInput
	prog bakeapi.BakeProgress
	out  bakeapi.BakeOutput
}

// newBakeRun sets up the progress query.
func newBakeRun(ctx workflow.Context, in bakeapi.BakeInput) (*bakeRun, error) {
	b := &bakeRun{
		in:   in,
		prog: bakeapi.BakeProgress{BakeID: in.BakeID, Stage: bakeapi.StageSeeding},
	}
	for _, s := range in.Splits {
		b.prog.Splits = append(
			b.prog.Splits,
			bakeapi.SplitProgress{Split: s.Name, Stage: bakeapi.StageSeeding, MLPsTotal: s.NMLPs},
		)
	}
	return b, workflow.SetQueryHandler(
		ctx,
		bakeapi.ProgressQuery,
		func() (bakeapi.BakeProgress, error) { return b.prog, nil },
	)
}

// stage enters stage s: in the progress query and in the BakeStage search attribute.
func (b *bakeRun) stage(ctx workflow.Context, s string) error {
	b.prog.Stage = s
	return workflow.UpsertTypedSearchAttributes(
		ctx,
		bakeIDKey.ValueSet(b.in.BakeID),
		bakeStageKey.ValueSet(s),
	)
}

// seeds commits the seeds of every split, in parallel.
func (b *bakeRun) seeds(ctx workflow.Context) ([]bakeapi.GenerateSeedsOutput, error) {
	if err := b.stage(ctx, bakeapi.StageSeeding); err != nil {
		return nil, err
	}
	futs := make([]future[bakeapi.GenerateSeedsOutput], len(b.in.Splits))
	for i, s := range b.in.Splits {
		sctx := controlOptions(
			ctx,
			b.in.Policy,
			b.in.Policy.SeedsTimeout,
			"seeds for split "+s.Name,
		)
		futs[i] = generateSeeds.start(sctx, bakeapi.GenerateSeedsInput{
			BakeID:       b.in.BakeID,
			Split:        s.Name,
			NMLPs:        s.NMLPs,
			Seed:         s.Seed,
			UploadedKey:  s.SeedsKey,
			SeedProtocol: b.in.Spec.SeedProtocol,
		})
	}
	out := make([]bakeapi.GenerateSeedsOutput, len(b.in.Splits))
	for i, f := range futs {
		var err error
		if out[i], err = f.get(ctx); err != nil {
			return nil, failed(err, "seeds for split %s", b.in.Splits[i].Name)
		}
	}
	return out, nil
}

// startSplit starts the SplitWorkflow of split i.
func (b *bakeRun) startSplit(
	ctx workflow.Context,
	i int,
	seeds bakeapi.GenerateSeedsOutput,
) future[bakeapi.SplitOutput] {
	s := b.in.Splits[i]
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: bakeapi.SplitWorkflowID(b.in.BakeID, s.Name),
		TaskQueue:  bakeapi.ControlQueue,
		// Cancelling the bake cancels its splits.
		ParentClosePolicy:   enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			bakeIDKey.ValueSet(b.in.BakeID), bakeStageKey.ValueSet(bakeapi.StageBaking)),
		StaticSummary: fmt.Sprintf(
			"split %s of bake %s: %d MLPs",
			s.Name,
			b.in.BakeID,
			s.NMLPs,
		),
	})
	f := splitWorkflow.startChild(cctx, bakeapi.SplitInput{
		BakeParams: b.in.BakeParams,
		Split:      s,
		Seeds:      seeds,
	})
	// Its seeds are committed: the split bakes. Its own query has the counts.
	b.prog.Splits[i].Stage = bakeapi.StageBaking
	return f
}

// splitBaked records in the progress query that split i baked all its
// slices, as r counts them, and is now in stage.
func (b *bakeRun) splitBaked(i int, r bakeapi.SplitOutput, stage string) {
	b.prog.Splits[i] = bakeapi.SplitProgress{
		Split:       b.in.Splits[i].Name,
		Stage:       stage,
		MLPsDone:    r.NMLPs,
		MLPsTotal:   r.NMLPs,
		SlicesDone:  r.Slices,
		SlicesTotal: r.Slices,
	}
}

// splits runs one SplitWorkflow per split and, beside each, the
// MergeSplit that merges its slices as they are committed, all at once, and
// returns the merged splits' prefixes in the bake's split order. The first
// failure of either ends the wait and cancels the merges.
func (b *bakeRun) splits(
	ctx workflow.Context,
	seeds []bakeapi.GenerateSeedsOutput,
) ([]string, error) {
	if err := b.stage(ctx, bakeapi.StageBaking); err != nil {
		return nil, err
	}
	n := len(b.in.Splits)
	mctx, cancelMerges := workflow.WithCancel(ctx)
	sel := workflow.NewSelector(ctx)
	merged := make([]string, n)
	baked := make([]bool, n)
	children, merges := n, n // still running
	var first error
	fail := func(err error, what string, args ...any) {
		if first == nil {
			first = failed(err, what, args...)
		}
	}
	for i, s := range b.in.Splits {
		child := b.startSplit(ctx, i, seeds[i])
		summary := fmt.Sprintf("merge split %s as its slices are committed", s.Name)
		merge := mergeSplit.start(mergeOptions(mctx, b.in.Policy, summary),
			bakeapi.MergeSplitInput{
				BakeID:            b.in.BakeID,
				Split:             s.Name,
				NMLPs:             s.NMLPs,
				NSlices:           bakeapi.SliceCount(s.NMLPs, b.in.SliceSize),
				CreatedAt:         b.in.CreatedAt,
				KeepIntermediates: b.in.KeepIntermediates,
			})
		sel.AddFuture(child.Future, func(workflow.Future) {
			children--
			r, err := child.get(ctx)
			if err != nil {
				fail(err, "split %s", s.Name)
				return
			}
			baked[i] = true
			stage := bakeapi.StageMerging
			if merged[i] != "" {
				stage = bakeapi.StageDone
			}
			b.splitBaked(i, r, stage)
		})
		sel.AddFuture(merge.Future, func(workflow.Future) {
			merges--
			m, err := merge.get(ctx)
			if err != nil {
				fail(err, "merge of split %s", s.Name)
				return
			}
			merged[i] = m.Prefix
			if baked[i] {
				b.prog.Splits[i].Stage = bakeapi.StageDone
			}
		})
	}
	for children+merges > 0 && first == nil {
		sel.Select(ctx)
	}
	if first == nil {
		return merged, nil
	}
	// A cancelled bake closes once its splits and merges have stopped. A
	// failed one closes at once: its close cancels the splits, and the
	// merges learn at their next heartbeat. A restart meanwhile writes the
	// same bytes.
	cancelMerges()
	for ctx.Err() != nil && children+merges > 0 {
		sel.Select(ctx)
	}
	return nil, first
}

// combine combines the merged splits into the bake's dataset.
func (b *bakeRun) combine(ctx workflow.Context, merged []string) error {
	if err := b.stage(ctx, bakeapi.StageCombining); err != nil {
		return err
	}
	cctx := controlOptions(ctx, b.in.Policy, b.in.Policy.MergeTimeout, "combine splits")
	comb, err := combineSplits.run(cctx, bakeapi.CombineSplitsInput{
		BakeID:            b.in.BakeID,
		Splits:            merged,
		DefaultSplit:      b.in.DefaultSplit,
		KeepIntermediates: b.in.KeepIntermediates,
	})
	if err != nil {
		return failed(err, "combining the splits")
	}
	b.out.DatasetPrefix = comb.Prefix
	b.out.ManifestSHA256 = comb.ManifestSHA256
	return nil
}

// release publishes the dataset as the input's release, if it names a bucket.
func (b *bakeRun) release(ctx workflow.Context) error {
	rel := b.in.Release
	if rel.Bucket == "" {
		return nil
	}
	if err := b.stage(ctx, bakeapi.StagePushing); err != nil {
		return err
	}
	pctx := controlOptions(
		ctx,
		b.in.Policy,
		b.in.Policy.PushTimeout,
		fmt.Sprintf("push %s/%s", rel.Name, rel.Tag),
	)
	pushed, err := push.run(pctx, bakeapi.PushInput{
		DatasetPrefix: b.out.DatasetPrefix,
		Bucket:        rel.Bucket,
		Prefix:        rel.Prefix,
		Name:          rel.Name,
		Tag:           rel.Tag,
	})
	if err != nil {
		return failed(err, "push of release %s/%s", rel.Name, rel.Tag)
	}
	b.out.ReleaseURI = pushed.URI
	return nil
}

// hubPush publishes the dataset on the Hugging Face Hub, if the input
// names a repository.
func (b *bakeRun) hubPush(ctx workflow.Context) error {
	if b.in.Hub == nil {
		return nil
	}
	if err := b.stage(ctx, bakeapi.StagePushing); err != nil {
		return err
	}
	hctx := controlOptions(
		ctx,
		b.in.Policy,
		b.in.Policy.PushTimeout,
		"push to the Hugging Face Hub: "+b.in.Hub.Repo,
	)
	hub, err := hubPush.run(
		hctx,
		bakeapi.HubPushInput{DatasetPrefix: b.out.DatasetPrefix, Hub: *b.in.Hub},
	)
	if err != nil {
		return failed(err, "push to the Hugging Face Hub repository %s", b.in.Hub.Repo)
	}
	b.out.HubURL = hub.URL
	b.out.HubCommit = hub.Commit
	return nil
}

// done records in the memo where the dataset went, for the Web UI to show,
// and enters the last stage.
func (b *bakeRun) done(ctx workflow.Context) error {
	memo := map[string]any{
		"dataset":         b.out.DatasetPrefix,
		"manifest_sha256": b.out.ManifestSHA256,
		"release":         b.out.ReleaseURI,
	}
	if b.in.Hub != nil {
		memo["hub"] = b.out.HubURL
	}
	if err := workflow.UpsertMemo(ctx, memo); err != nil {
		return err
	}
	return b.stage(ctx, bakeapi.StageDone)
}
