// Package workflows holds the bake DAG: BakeWorkflow (seeds, one child per
// split, combine, push) and SplitWorkflow (fan-out of slices, merge). Only
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

// drainChange is the workflow.GetVersion change after which a cancelled
// bake closes only once its splits have closed, and a cancelled split only
// once its merge has stopped: a restart of the bake starts the same split
// workflow IDs and merges at the same keys, which must not still be in use
// by the cancelled run (ChildWorkflowExecutionAlreadyStarted). Histories
// recorded before it closed as soon as they had asked their children and
// activities to stop.
const drainChange = "cancel-drains"

// BakeWorkflow runs a whole bake.
func BakeWorkflow(ctx workflow.Context, in bakeapi.BakeInput) (bakeapi.BakeOutput, error) {
	var out bakeapi.BakeOutput
	drain := workflow.GetVersion(ctx, drainChange, workflow.DefaultVersion, 1) == 1
	prog := bakeapi.BakeProgress{BakeID: in.BakeID, Stage: bakeapi.StageSeeding}
	for _, s := range in.Splits {
		prog.Splits = append(prog.Splits, bakeapi.SplitProgress{Split: s.Name, Stage: bakeapi.StageSeeding, MLPsTotal: s.NMLPs})
	}
	if err := workflow.SetQueryHandler(ctx, bakeapi.ProgressQuery, func() (bakeapi.BakeProgress, error) { return prog, nil }); err != nil {
		return out, err
	}
	stage := func(s string) error {
		prog.Stage = s
		return workflow.UpsertTypedSearchAttributes(ctx, bakeIDKey.ValueSet(in.BakeID), bakeStageKey.ValueSet(s))
	}

	// Step 1. Seeds for every split, in parallel.
	if err := stage(bakeapi.StageSeeding); err != nil {
		return out, err
	}
	seedFuts := make([]workflow.Future, len(in.Splits))
	for i, s := range in.Splits {
		sctx := controlOptions(ctx, drain, in.Policy, in.Policy.SeedsTimeout, "seeds for split "+s.Name)
		seedFuts[i] = workflow.ExecuteActivity(sctx, bakeapi.GenerateSeedsActivity, bakeapi.GenerateSeedsInput{
			BakeID: in.BakeID, Split: s.Name, NMLPs: s.NMLPs, Seed: s.Seed, UploadedKey: s.SeedsKey, SeedProtocol: in.Spec.SeedProtocol})
	}
	seedsOut := make([]bakeapi.GenerateSeedsOutput, len(in.Splits))
	for i, f := range seedFuts {
		if err := f.Get(ctx, &seedsOut[i]); err != nil {
			return out, failed(err, "seeds for split %s", in.Splits[i].Name)
		}
	}

	// Step 2. One child workflow per split: fan out slices, merge.
	if err := stage(bakeapi.StageBaking); err != nil {
		return out, err
	}
	childFuts := make([]workflow.ChildWorkflowFuture, len(in.Splits))
	for i, s := range in.Splits {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:          bakeapi.SplitWorkflowID(in.BakeID, s.Name),
			TaskQueue:           bakeapi.ControlQueue,
			ParentClosePolicy:   enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL, // cancelling the bake cancels its splits
			WaitForCancellation: drain,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				bakeIDKey.ValueSet(in.BakeID), bakeStageKey.ValueSet(bakeapi.StageBaking)),
			StaticSummary: fmt.Sprintf("split %s of bake %s: %d MLPs", s.Name, in.BakeID, s.NMLPs),
		})
		childFuts[i] = workflow.ExecuteChildWorkflow(cctx, bakeapi.SplitWorkflowName, bakeapi.SplitInput{
			BakeID: in.BakeID, Split: s, Seeds: seedsOut[i], Spec: in.Spec,
			SliceSize: in.SliceSize, MaxInFlight: in.MaxInFlight, GPUQueue: in.GPUQueue, Policy: in.Policy, CreatedAt: in.CreatedAt,
			KeepIntermediates: in.KeepIntermediates})
	}
	merged := make([]string, len(in.Splits))
	for i, f := range childFuts {
		var r bakeapi.SplitOutput
		if err := f.Get(ctx, &r); err != nil {
			return out, failed(err, "split %s", in.Splits[i].Name)
		}
		merged[i] = r.MergedPrefix
		prog.Splits[i] = bakeapi.SplitProgress{Split: in.Splits[i].Name, Stage: bakeapi.StageDone, MLPsDone: r.NMLPs, MLPsTotal: r.NMLPs,
			SlicesDone: r.Slices, SlicesTotal: r.Slices}
	}

	// Step 3. Combine the splits into the final dataset.
	if err := stage(bakeapi.StageCombining); err != nil {
		return out, err
	}
	var comb bakeapi.CombineSplitsOutput
	cctx := controlOptions(ctx, drain, in.Policy, in.Policy.MergeTimeout, "combine splits")
	if err := workflow.ExecuteActivity(cctx, bakeapi.CombineSplitsActivity, bakeapi.CombineSplitsInput{
		BakeID: in.BakeID, Splits: merged, DefaultSplit: in.DefaultSplit, KeepIntermediates: in.KeepIntermediates}).Get(ctx, &comb); err != nil {
		return out, failed(err, "combining the splits")
	}
	out.DatasetPrefix, out.ManifestSHA256 = comb.Prefix, comb.ManifestSHA256

	// Step 4. Publish the release.
	if in.Release.Bucket != "" {
		if err := stage(bakeapi.StagePushing); err != nil {
			return out, err
		}
		var pushed bakeapi.PushOutput
		pctx := controlOptions(ctx, drain, in.Policy, in.Policy.PushTimeout, fmt.Sprintf("push %s/%s", in.Release.Name, in.Release.Tag))
		if err := workflow.ExecuteActivity(pctx, bakeapi.PushActivity, bakeapi.PushInput{DatasetPrefix: comb.Prefix,
			Bucket: in.Release.Bucket, Prefix: in.Release.Prefix, Name: in.Release.Name, Tag: in.Release.Tag}).Get(ctx, &pushed); err != nil {
			return out, failed(err, "push of release %s/%s", in.Release.Name, in.Release.Tag)
		}
		out.ReleaseURI = pushed.URI
	}
	memo := map[string]any{"dataset": out.DatasetPrefix, "manifest_sha256": out.ManifestSHA256, "release": out.ReleaseURI}

	// Step 5. Publish on the Hugging Face Hub. Gated by the input: histories
	// from before it have no Hub and issue no command here, so they replay.
	if in.Hub != nil {
		if err := stage(bakeapi.StagePushing); err != nil {
			return out, err
		}
		var hub bakeapi.HubPushOutput
		hctx := controlOptions(ctx, drain, in.Policy, in.Policy.PushTimeout, "push to the Hugging Face Hub: "+in.Hub.Repo)
		if err := workflow.ExecuteActivity(hctx, bakeapi.HubPushActivity, bakeapi.HubPushInput{DatasetPrefix: comb.Prefix, Hub: *in.Hub}).Get(ctx, &hub); err != nil {
			return out, failed(err, "push to the Hugging Face Hub repository %s", in.Hub.Repo)
		}
		out.HubURL, out.HubCommit = hub.URL, hub.Commit
		memo["hub"] = hub.URL
	}
	if err := workflow.UpsertMemo(ctx, memo); err != nil {
		return out, err
	}
	return out, stage(bakeapi.StageDone)
}
