package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/workflows"
)

// TestSplitNamesProtocol4Once: a protocol-4.0 split runs NameSplit once, on
// its GPU queue and before any slice, with the seeds and declared salt its
// slices get; a 3.0 split, and a 4.0 split's continued run, run none.
func TestSplitNamesProtocol4Once(t *testing.T) {
	v4 := bakeapi.Spec{
		SeedProtocol: bakeapi.SeedProtocolV4,
		Salt:         bakeapi.Salt{SHA256: strings.Repeat("ab", 32)},
	}
	cases := []struct {
		name      string
		protocol  bakeapi.SeedProtocol
		continued bool
		want      int
	}{
		{"4.0", bakeapi.SeedProtocolV4, false, 1},
		{"3.0", bakeapi.SeedProtocolV3, false, 0},
		{"4.0 continued", bakeapi.SeedProtocolV4, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv()
			in := splitInput("names", 7, 2, 2)
			in.GPUQueue = "bake-gpu-a"
			in.Spec.SeedProtocol = c.protocol
			if c.protocol == bakeapi.SeedProtocolV4 {
				in.Spec.Salt = v4.Salt
			}
			if c.continued {
				in.Cursor = &bakeapi.SplitCursor{Next: 1, Runs: 1}
			}
			var order []string
			env.SetOnActivityStartedListener(
				func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
					order = append(order, info.ActivityType.Name)
					if info.ActivityType.Name == bakeapi.NameSplitActivity &&
						info.TaskQueue != in.GPUQueue {
						t.Errorf(
							"NameSplit ran on %q, want the GPU queue %q",
							info.TaskQueue,
							in.GPUQueue,
						)
					}
				},
			)
			var named []bakeapi.NameSplitInput
			env.OnActivity(acts.NameSplit, mock.Anything, mock.Anything).Return(
				func(
					_ context.Context,
					in bakeapi.NameSplitInput,
				) (bakeapi.NameSplitOutput, error) {
					named = append(named, in)
					return bakeapi.NameSplitOutput{Blocks: 1}, nil
				},
			).Maybe()
			env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).Return(
				func(
					_ context.Context,
					in bakeapi.BakeSliceInput,
				) (bakeapi.BakeSliceOutput, error) {
					return fakeSlice(in), nil
				},
			)
			env.ExecuteWorkflow(workflows.SplitWorkflow, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if len(named) != c.want {
				t.Fatalf(
					"NameSplit ran %d times, want %d (activities %v)",
					len(named),
					c.want,
					order,
				)
			}
			if c.want == 0 {
				return
			}
			if order[0] != bakeapi.NameSplitActivity {
				t.Errorf("activities ran in the order %v, want NameSplit first", order)
			}
			want := bakeapi.NameSplitInput{
				BakeID:      "names",
				Split:       "public",
				NMLPs:       7,
				SeedsKey:    in.Seeds.SeedsKey,
				SeedsSHA256: in.Seeds.SHA256,
				Salt:        v4.Salt,
			}
			if named[0] != want {
				t.Errorf("NameSplit input %+v, want %+v", named[0], want)
			}
		})
	}
}

// TestSplitNameFailureFailsTheSplit: a NameSplit that fails (here a worker
// without the bake's salt, InvalidConfig) fails the split with its kind, and
// no slice starts.
func TestSplitNameFailureFailsTheSplit(t *testing.T) {
	env := newEnv()
	in := splitInput("names", 4, 2, 2)
	in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	in.Spec.Salt = bakeapi.Salt{SHA256: strings.Repeat("ab", 32)}
	env.OnActivity(acts.NameSplit, mock.Anything, mock.Anything).Return(
		bakeapi.NameSplitOutput{},
		temporal.NewNonRetryableApplicationError(
			"WHEST_SEED_SALT is not set",
			bakeapi.ErrInvalidConfig,
			nil,
		),
	)
	env.OnActivity(acts.BakeSlice, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
			t.Errorf("slice %d started after NameSplit failed", in.Slice)
			return fakeSlice(in), nil
		}).Maybe()
	env.ExecuteWorkflow(workflows.SplitWorkflow, in)
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != bakeapi.ErrInvalidConfig ||
		!strings.Contains(err.Error(), "naming the MLPs of split public") {
		t.Fatalf("split error %v, want an InvalidConfig failure naming the split", err)
	}
}
