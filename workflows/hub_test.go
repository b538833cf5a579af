package workflows_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/workflows"
)

// The Hub push runs after the S3 release, with the combined dataset and the
// configured repository, and only when one is configured; a refusal of the
// Hub fails the bake with its type, without retries.
func TestHubPushFollowsTheReleaseWhenConfigured(t *testing.T) {
	hubSpec := &bakeapi.HubSpec{Repo: "alice/gt", Tag: "v1", Endpoint: "http://127.0.0.1:1"}
	for _, c := range []struct {
		name    string
		hub     *bakeapi.HubSpec
		s3      bool
		failure error
		want    []string // activities after CombineSplits, in order
	}{
		{"both", hubSpec, true, nil, []string{bakeapi.PushActivity, bakeapi.HubPushActivity}},
		{"hub alone", hubSpec, false, nil, []string{bakeapi.HubPushActivity}},
		{"s3 alone", nil, true, nil, []string{bakeapi.PushActivity}},
		{
			"hub refuses",
			hubSpec,
			true,
			temporal.NewNonRetryableApplicationError("HTTP 403", bakeapi.ErrHubAccess, nil),
			[]string{bakeapi.PushActivity, bakeapi.HubPushActivity},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv()
			in := oneSplitBake(
				env,
				"hub",
				func(_ context.Context, s bakeapi.BakeSliceInput) (bakeapi.BakeSliceOutput, error) {
					return fakeSlice(s), nil
				},
			)
			in.Hub = c.hub
			if !c.s3 {
				in.Release = bakeapi.ReleaseSpec{}
			}
			var mu sync.Mutex
			var order []string
			var got bakeapi.HubPushInput
			env.SetOnActivityStartedListener(
				func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
					if n := info.ActivityType.Name; n == bakeapi.PushActivity ||
						n == bakeapi.HubPushActivity {
						mu.Lock()
						defer mu.Unlock()
						order = append(order, n)
					}
				},
			)
			env.OnActivity(acts.HubPush, mock.Anything, mock.Anything).Return(
				func(_ context.Context, h bakeapi.HubPushInput) (bakeapi.HubPushOutput, error) {
					got = h
					return bakeapi.HubPushOutput{
						Commit: strings.Repeat("a", 40),
						URL:    "http://hub/datasets/alice/gt/tree/v1",
					}, c.failure
				})
			env.ExecuteWorkflow(workflows.BakeWorkflow, in)
			if !slices.Equal(order, c.want) {
				t.Errorf("activities after combine %v, want %v", order, c.want)
			}
			err := env.GetWorkflowError()
			if c.failure != nil {
				if types := appErrorTypes(err); !slices.Contains(types, bakeapi.ErrHubAccess) {
					t.Errorf("bake error %v (types %v), want HubAccess", err, types)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out bakeapi.BakeOutput
			if err := env.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			if c.hub == nil {
				if out.HubURL != "" {
					t.Errorf("result %+v names a Hub push that was not configured", out)
				}
				return
			}
			if got.DatasetPrefix != keys.Bake("hub").Dataset() || got.Hub != *c.hub {
				t.Errorf("HubPush input %+v, want the combined dataset and %+v", got, *c.hub)
			}
			if out.HubURL != "http://hub/datasets/alice/gt/tree/v1" ||
				out.HubCommit != strings.Repeat("a", 40) {
				t.Errorf("result %+v lacks the Hub commit", out)
			}
		})
	}
}
