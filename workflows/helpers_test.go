package workflows_test

import (
	"context"
	"io"
	"log/slog"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/stretchr/testify/mock"
	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
)

// acts is the nil receiver the workflows call activities through; mocks name
// activities by the same method values.
var acts *activities.Activities

// fastPolicy keeps every retry at one second so the (skipped) workflow clock
// and the real clock of the MinIO-backed tests both stay short.
func fastPolicy() bakeapi.Policy {
	p := bakeapi.DefaultPolicy
	p.RetryInitial = bakeapi.Duration(time.Second)
	p.RetryMax = bakeapi.Duration(time.Second)
	p.SliceMaxAttempts = 3
	p.OtherMaxAttempts = 3
	return p
}

func u64(v uint64) *uint64 { return &v }

// twoSplitInput is a small two-split bake; public has 5 MLPs so its slices are
// uneven (whestbench's k·n/count boundaries matter).
func twoSplitInput(bakeID string) bakeapi.BakeInput {
	return bakeapi.BakeInput{
		BakeParams: bakeapi.BakeParams{
			BakeID: bakeID,
			Spec: bakeapi.Spec{
				Width:     4,
				Depth:     2,
				NSamples:  512,
				Sampler:   "philox",
				ChunkSize: 64,
			},
			SliceSize:   2,
			MaxInFlight: 2,
			GPUQueue:    bakeapi.GPUQueue,
			Policy:      fastPolicy(),
		},
		Splits: []bakeapi.SplitSpec{
			{Name: "public", Config: "default", NMLPs: 5, Seed: u64(11)},
			{Name: "holdout", Config: "holdout", NMLPs: 3, Seed: u64(12)},
		},
	}
}

// wantSlices is whestbench's --slice k/count semantics written out, the
// independent truth for how a split is cut: [k·n/count, (k+1)·n/count).
func wantSlices(n, sliceSize int) [][2]int {
	count := (n + sliceSize - 1) / sliceSize
	out := make([][2]int, count)
	for k := range out {
		out[k] = [2]int{k * n / count, (k + 1) * n / count}
	}
	return out
}

// seedsMock is fakeSeeds in the GenerateSeeds activity's signature.
func seedsMock(
	_ context.Context,
	in bakeapi.GenerateSeedsInput,
) (bakeapi.GenerateSeedsOutput, error) {
	return fakeSeeds(in)
}

// fakeSeeds answers GenerateSeeds without a store.
func fakeSeeds(in bakeapi.GenerateSeedsInput) (bakeapi.GenerateSeedsOutput, error) {
	return bakeapi.GenerateSeedsOutput{
		SeedsKey: keys.Bake(in.BakeID).Seeds(in.Split),
		SHA256:   "sha-" + in.Split,
		NMLPs:    in.NMLPs,
	}, nil
}

func fakeSlice(in bakeapi.BakeSliceInput) bakeapi.BakeSliceOutput {
	return bakeapi.BakeSliceOutput{
		Prefix:         keys.Bake(in.BakeID).Slice(in.Split, in.Slice),
		ManifestSHA256: "slice",
		Computed:       in.End - in.Start,
	}
}

// mockMergeAndCombine answers the merges beside the splits and the combine
// of bake with fakeMerge and fakeCombine.
func mockMergeAndCombine(env *testsuite.TestWorkflowEnvironment, bake bakeapi.BakeInput) {
	merge := func(_ context.Context, m bakeapi.MergeSplitInput) (bakeapi.MergeSplitOutput, error) {
		return fakeMerge(bake)(m), nil
	}
	combine := func(
		_ context.Context,
		c bakeapi.CombineSplitsInput,
	) (bakeapi.CombineSplitsOutput, error) {
		return fakeCombine(c), nil
	}
	env.OnActivity(acts.MergeSplit, mock.Anything, mock.Anything).Return(merge)
	env.OnActivity(acts.CombineSplits, mock.Anything, mock.Anything).Return(combine)
}

// fakeMerge answers MergeSplit with the split's MLP count taken from the bake input.
func fakeMerge(bake bakeapi.BakeInput) func(bakeapi.MergeSplitInput) bakeapi.MergeSplitOutput {
	return func(in bakeapi.MergeSplitInput) bakeapi.MergeSplitOutput {
		out := bakeapi.MergeSplitOutput{
			Prefix:         keys.Bake(in.BakeID).Merged(in.Split),
			ManifestSHA256: "merged-" + in.Split,
		}
		for _, s := range bake.Splits {
			if s.Name == in.Split {
				out.NMLPs = s.NMLPs
			}
		}
		return out
	}
}

func fakeCombine(in bakeapi.CombineSplitsInput) bakeapi.CombineSplitsOutput {
	return bakeapi.CombineSplitsOutput{
		Prefix:         keys.Bake(in.BakeID).Dataset(),
		ManifestSHA256: "final",
		Files:          3,
	}
}

// newEnv is a test workflow environment whose SDK logging is dropped: the
// tests assert on results, and the debug lines would bury a failure.
func newEnv() *testsuite.TestWorkflowEnvironment {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(quietLogger())
	return ts.NewTestWorkflowEnvironment()
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}
