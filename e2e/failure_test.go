package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/workflows"
)

// TestBadInputsThatReachTheWorkers: mistakes the starter cannot or did not
// see end the bake at once (no retries), `whestbake status` shows the error
// type and message, and nothing is released.
func TestBadInputsThatReachTheWorkers(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	statusCfg := s.writeConfig("status", s.baseConfig())

	t.Run("tag already released with different content", func(t *testing.T) {
		s := s.sub(t)
		first := smallBake("taken-1", 600)
		first.Tag = "taken"
		s.bake(first)
		ctx := context.Background()
		rel := keys.Manifest(keys.Release(releasePrefix, "e2e", "taken"))
		before, err := s.rel.Get(ctx, rel)
		if err != nil {
			t.Fatal(err)
		}
		second := smallBake("taken-2", 700)
		second.Tag = "taken"
		// A used tag is found at the start, not after the whole bake.
		r := s.whestbake(nil, "bake", "--config-file", s.bakeConfig(second),
			"--id", second.ID, "--wait")
		if r.code == 0 ||
			!strings.Contains(r.stderr, `release.tag "taken"`) ||
			!strings.Contains(r.stderr, "already holds a released dataset") {
			t.Errorf("`bake --wait` should refuse the used tag at once:\n%s", r)
		}
		_, err = s.tc.DescribeWorkflowExecution(ctx, bakeapi.BakeWorkflowID(second.ID), "")
		if err == nil {
			t.Error("the starter started a bake whose release tag is taken")
		}
		if after, _ := s.rel.Get(ctx, rel); string(after) != string(before) {
			t.Error("the refused bake changed the existing release")
		}
	})

	// Inputs the starter would refuse, sent straight to Temporal by another
	// client: the activities check them again.
	direct := []struct {
		name, kind, activity string
		spoil                func(*bakeapi.BakeInput)
	}{
		{"zero width", bakeapi.ErrInvalidConfig, "BakeSlice",
			func(in *bakeapi.BakeInput) { in.Spec.Width = 0 }},
		{"missing uploaded seeds file", bakeapi.ErrInvalidSeeds, "GenerateSeeds",
			func(in *bakeapi.BakeInput) {
				in.Splits[0].Seed = nil
				in.Splits[0].SeedsKey = keys.Bake(in.BakeID).InputSeeds(in.Splits[0].Name)
			}},
		{"bad split name", bakeapi.ErrInvalidConfig, "BakeSlice",
			func(in *bakeapi.BakeInput) { in.Splits[1].Name = "Hold Out" }},
	}
	for i, c := range direct {
		t.Run("direct start: "+c.name, func(t *testing.T) {
			s := s.sub(t)
			id := "direct-" + string(rune('a'+i))
			in := directInput(id)
			c.spoil(&in)
			start := time.Now()
			bakeIDKey := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeIDAttribute)
			stageKey := temporal.NewSearchAttributeKeyKeyword(bakeapi.BakeStageAttribute)
			run, err := s.tc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
				ID:        bakeapi.BakeWorkflowID(id),
				TaskQueue: bakeapi.ControlQueue,
				TypedSearchAttributes: temporal.NewSearchAttributes(
					bakeIDKey.ValueSet(id),
					stageKey.ValueSet(bakeapi.StageSeeding),
				),
			}, workflows.BakeWorkflow, in)
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Get(context.Background(), nil); err == nil {
				t.Fatal("the bake succeeded")
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %s to fail: a permanent error was retried", took)
			}
			s.wantStatusFailure(t, statusCfg, id, c.kind, "")
			s.wantSingleAttempt(t, bakeapi.BakeWorkflowID(id), c.activity)
			s.assertNothingReleased(t, id)
		})
	}
}

// directInput is a valid two-split bake input with a release, as the starter builds it.
func directInput(id string) bakeapi.BakeInput {
	p := bakeapi.DefaultPolicy
	p.RetryInitial = bakeapi.Duration(time.Second)
	p.RetryMax = bakeapi.Duration(2 * time.Second)
	p.SliceHeartbeat = bakeapi.Duration(2 * time.Second)
	seed := uint64(800)
	return bakeapi.BakeInput{
		BakeParams: bakeapi.BakeParams{
			BakeID: id,
			Spec: bakeapi.Spec{
				Width:    8,
				Depth:    2,
				NSamples: 1000,
				Sampler:  "philox",
			},
			SliceSize:   2,
			MaxInFlight: 2,
			GPUQueue:    bakeapi.GPUQueue,
			Policy:      p,
		},
		Splits: []bakeapi.SplitSpec{
			{Name: "public", Config: "default", NMLPs: 3, Seed: &seed},
			{Name: "holdout", Config: "holdout", NMLPs: 2, Seed: &seed},
		},
		Release: bakeapi.ReleaseSpec{
			Bucket: releaseBucket,
			Prefix: releasePrefix,
			Name:   "e2e",
			Tag:    id,
		},
	}
}

// wantStatusFailure: `whestbake status` exits non-zero and shows the error
// type (and message part, if any).
func (s *stack) wantStatusFailure(t *testing.T, cfg, id, kind, message string) {
	t.Helper()
	st := s.whestbake(nil, "status", id, "--config-file", cfg)
	out := st.stdout + st.stderr
	if st.code == 0 ||
		!strings.Contains(strings.ToLower(out), "failed") ||
		!strings.Contains(out, kind) ||
		!strings.Contains(out, message) {
		t.Errorf("`whestbake status %s` should exit non-zero "+
			"showing a failure of type %s (%q):\n%s", id, kind, message, st)
	}
}

// wantSingleAttempt: every run of the activity type in the workflow's own
// history (or its splits') was a first attempt: the error was not retried.
func (s *stack) wantSingleAttempt(t *testing.T, workflowID, activityType string) {
	t.Helper()
	ids := []string{workflowID}
	if activityType == "BakeSlice" {
		bakeID, _ := bakeapi.BakeIDFromWorkflowID(workflowID)
		ids = []string{
			bakeapi.SplitWorkflowID(bakeID, "public"),
			bakeapi.SplitWorkflowID(bakeID, "holdout"),
			bakeapi.SplitWorkflowID(bakeID, "Hold Out"),
		}
	}
	seen := 0
	for _, id := range ids {
		if _, err := s.tc.DescribeWorkflowExecution(context.Background(), id, ""); err != nil {
			continue // that split never started
		}
		scheduled := map[int64]string{}
		for _, e := range s.history(id, "").Events {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				scheduled[e.GetEventId()] = a.GetActivityType().GetName()
			}
			a := e.GetActivityTaskStartedEventAttributes()
			if a != nil && scheduled[a.GetScheduledEventId()] == activityType {
				seen++
				if a.GetAttempt() != 1 {
					t.Errorf("%s in %s ran as attempt %d: the permanent error was retried",
						activityType, id, a.GetAttempt())
				}
			}
		}
	}
	if seen == 0 {
		t.Errorf("no %s ran in %v", activityType, ids)
	}
}
