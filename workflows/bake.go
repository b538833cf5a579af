// Package workflows holds the bake DAG: BakeWorkflow (seeds, one child per
// split, combine, push) and SplitWorkflow (fan-out of slices, merge). Only
// keys, counts and sha256s travel through Temporal; the bytes live in MinIO.
package workflows

import (
	"fmt"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/keys"
)

// Search attributes registered on the server (`whestbake dev up` does it).
var (
	BakeIDAttr    = temporal.NewSearchAttributeKeyKeyword("BakeID")
	BakeStageAttr = temporal.NewSearchAttributeKeyKeyword("BakeStage")
)

// SplitSpec is one split of a bake.
type SplitSpec struct {
	Name, Config string
	NMLPs        int
	Seed         *uint64 `json:",omitempty"` // generate seeds deterministically from this root
	SeedsKey     string  `json:",omitempty"` // or use the seeds file the starter uploaded here
}

// ReleaseSpec is where Push publishes; an empty Bucket skips the push.
type ReleaseSpec struct {
	Bucket, Prefix, Name, Tag string
}

// BakeInput is everything a bake needs, all of it small and secret-free.
type BakeInput struct {
	BakeID       string
	Shape        activities.Shape
	Splits       []SplitSpec
	DefaultSplit string `json:",omitempty"`
	SliceSize    int    // MLPs per BakeSlice activity
	MaxInFlight  int    // slices running at once per split
	GPUQueue     string // task queue of the GPU workers
	Release      ReleaseSpec
	Policy       Policy
}

// BakeOutput is where the result is.
type BakeOutput struct {
	DatasetPrefix, ManifestSHA256 string
	ReleaseURI                    string `json:",omitempty"`
}

// BakeWorkflow runs a whole bake.
func BakeWorkflow(ctx workflow.Context, in BakeInput) (BakeOutput, error) {
	var a *activities.Activities
	var out BakeOutput
	prog := BakeProgress{BakeID: in.BakeID, Stage: StageSeeding}
	for _, s := range in.Splits {
		prog.Splits = append(prog.Splits, SplitProgress{Split: s.Name, Stage: StageSeeding, MLPsTotal: s.NMLPs})
	}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (BakeProgress, error) { return prog, nil }); err != nil {
		return out, err
	}
	stage := func(s string) error {
		prog.Stage = s
		return workflow.UpsertTypedSearchAttributes(ctx, BakeIDAttr.ValueSet(in.BakeID), BakeStageAttr.ValueSet(s))
	}

	// Step 1. Seeds for every split, in parallel.
	if err := stage(StageSeeding); err != nil {
		return out, err
	}
	seedFuts := make([]workflow.Future, len(in.Splits))
	for i, s := range in.Splits {
		sctx := in.Policy.controlOptions(ctx, in.Policy.SeedsTimeout, "seeds for split "+s.Name)
		seedFuts[i] = workflow.ExecuteActivity(sctx, a.GenerateSeeds, activities.GenerateSeedsInput{
			BakeID: in.BakeID, Split: s.Name, NMLPs: s.NMLPs, Seed: s.Seed, UploadedKey: s.SeedsKey})
	}
	seedsOut := make([]activities.GenerateSeedsOutput, len(in.Splits))
	for i, f := range seedFuts {
		if err := f.Get(ctx, &seedsOut[i]); err != nil {
			return out, failed(err, "seeds for split %s", in.Splits[i].Name)
		}
	}

	// Step 2. One child workflow per split: fan out slices, merge.
	if err := stage(StageBaking); err != nil {
		return out, err
	}
	childFuts := make([]workflow.ChildWorkflowFuture, len(in.Splits))
	for i, s := range in.Splits {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:        keys.SplitWorkflowID(in.BakeID, s.Name),
			TaskQueue:         ControlQueue,
			ParentClosePolicy: enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL, // cancelling the bake cancels its splits
			TypedSearchAttributes: temporal.NewSearchAttributes(
				BakeIDAttr.ValueSet(in.BakeID), BakeStageAttr.ValueSet(StageBaking)),
			StaticSummary: fmt.Sprintf("split %s of bake %s: %d MLPs", s.Name, in.BakeID, s.NMLPs),
		})
		childFuts[i] = workflow.ExecuteChildWorkflow(cctx, SplitWorkflow, SplitInput{
			BakeID: in.BakeID, Split: s, Seeds: seedsOut[i], Shape: in.Shape,
			SliceSize: in.SliceSize, MaxInFlight: in.MaxInFlight, GPUQueue: in.GPUQueue, Policy: in.Policy})
	}
	merged := make([]string, len(in.Splits))
	for i, f := range childFuts {
		var r SplitOutput
		if err := f.Get(ctx, &r); err != nil {
			return out, failed(err, "split %s", in.Splits[i].Name)
		}
		merged[i] = r.MergedPrefix
		prog.Splits[i] = SplitProgress{Split: in.Splits[i].Name, Stage: StageDone, MLPsDone: r.NMLPs, MLPsTotal: r.NMLPs,
			SlicesDone: r.Slices, SlicesTotal: r.Slices}
	}

	// Step 3. Combine the splits into the final dataset.
	if err := stage(StageCombining); err != nil {
		return out, err
	}
	var comb activities.CombineSplitsOutput
	cctx := in.Policy.controlOptions(ctx, in.Policy.MergeTimeout, "combine splits")
	if err := workflow.ExecuteActivity(cctx, a.CombineSplits, activities.CombineSplitsInput{
		BakeID: in.BakeID, Splits: merged, DefaultSplit: in.DefaultSplit}).Get(ctx, &comb); err != nil {
		return out, failed(err, "combining the splits")
	}
	out.DatasetPrefix, out.ManifestSHA256 = comb.Prefix, comb.ManifestSHA256

	// Step 4. Publish the release.
	if in.Release.Bucket != "" {
		if err := stage(StagePushing); err != nil {
			return out, err
		}
		var pushed activities.PushOutput
		pctx := in.Policy.controlOptions(ctx, in.Policy.PushTimeout, fmt.Sprintf("push %s/%s", in.Release.Name, in.Release.Tag))
		if err := workflow.ExecuteActivity(pctx, a.Push, activities.PushInput{DatasetPrefix: comb.Prefix,
			Bucket: in.Release.Bucket, Prefix: in.Release.Prefix, Name: in.Release.Name, Tag: in.Release.Tag}).Get(ctx, &pushed); err != nil {
			return out, failed(err, "push of release %s/%s", in.Release.Name, in.Release.Tag)
		}
		out.ReleaseURI = pushed.URI
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{"dataset": out.DatasetPrefix, "manifest_sha256": out.ManifestSHA256, "release": out.ReleaseURI}); err != nil {
		return out, err
	}
	return out, stage(StageDone)
}
