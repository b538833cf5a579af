package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/metrics"
)

// A retried BakeSlice whose last attempt a heartbeat timeout ended is
// counted once, by the worker that takes the retry; another failure, a
// first attempt or another activity is not, and a failed look at the
// server costs the slice nothing.
func TestLostSlicesCountHeartbeatTimeouts(t *testing.T) {
	for _, c := range []struct {
		name     string
		activity string
		last     *failurepb.Failure
		lookErr  error
		want     float64
	}{
		{"heartbeat timeout", bakeapi.BakeSliceActivity, timeoutFailure(enums.TIMEOUT_TYPE_HEARTBEAT), nil, 1},
		{"start-to-close timeout", bakeapi.BakeSliceActivity, timeoutFailure(enums.TIMEOUT_TYPE_START_TO_CLOSE), nil, 0},
		{"application failure", bakeapi.BakeSliceActivity, &failurepb.Failure{Message: "stalled"}, nil, 0},
		{"the look fails", bakeapi.BakeSliceActivity, nil, errors.New("unavailable"), 0},
		{"another activity", "MergeSplit", timeoutFailure(enums.TIMEOUT_TYPE_HEARTBEAT), nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := metrics.New("gpu", "test")
			if err != nil {
				t.Fatal(err)
			}
			looks := 0
			lost := &lostSlices{metrics: m, lastFailure: func(context.Context, activity.Info,
			) (*failurepb.Failure, error) {
				looks++
				return c.last, c.lookErr
			}}
			runTwoAttempts(t, c.activity, lost)
			if got := counter(t, m, "whestbake_slice_heartbeat_timeouts_total"); got != c.want {
				t.Errorf("heartbeat timeouts %v, want %v", got, c.want)
			}
			if want := map[bool]int{true: 1, false: 0}[c.activity == bakeapi.BakeSliceActivity]; looks != want {
				t.Errorf("looked %d times, want %d (the second attempt only)", looks, want)
			}
		})
	}
}

// runTwoAttempts runs activity name, which fails its first attempt, under
// a worker with lost.
func runTwoAttempts(t *testing.T, name string, lost *lostSlices) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(sdkworker.Options{Interceptors: []interceptor.WorkerInterceptor{lost}})
	env.RegisterActivityWithOptions(func(ctx context.Context) error {
		if activity.GetInfo(ctx).Attempt == 1 {
			return errors.New("first attempt")
		}
		return nil
	}, activity.RegisterOptions{Name: name})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Millisecond, MaximumAttempts: 2},
		})
		return workflow.ExecuteActivity(ctx, name).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "w"})
	env.ExecuteWorkflow("w")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

func timeoutFailure(typ enums.TimeoutType) *failurepb.Failure {
	return &failurepb.Failure{FailureInfo: &failurepb.Failure_TimeoutFailureInfo{
		TimeoutFailureInfo: &failurepb.TimeoutFailureInfo{TimeoutType: typ}}}
}

// counter is the value of a counter without labels on m's registry.
func counter(t *testing.T, m *metrics.Worker, name string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
