package worker

import (
	"context"
	"time"

	enums "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/metrics"
)

// lostSlices counts the slice attempts that a heartbeat timeout ended: the
// host died, hung or lost its network, and nothing of its own says so. The
// worker that takes the slice's next attempt learns it from Temporal, whose
// record of the pending activity holds the last attempt's failure where
// the activity's own info does not. It counts it in
// whestbake_slice_heartbeat_timeouts_total and logs it at WARN.
type lostSlices struct {
	interceptor.WorkerInterceptorBase
	metrics *metrics.Worker
	// lastFailure is the failure of the attempt before the running one.
	lastFailure func(context.Context, activity.Info) (*failurepb.Failure, error)
}

// describeTimeout bounds the one extra call a retried slice makes: its
// count must not delay the slice.
const describeTimeout = 5 * time.Second

func newLostSlices(c client.Client, m *metrics.Worker) *lostSlices {
	return &lostSlices{metrics: m, lastFailure: func(ctx context.Context, info activity.Info,
	) (*failurepb.Failure, error) {
		ctx, cancel := context.WithTimeout(ctx, describeTimeout)
		defer cancel()
		wf := info.WorkflowExecution
		desc, err := c.DescribeWorkflowExecution(ctx, wf.ID, wf.RunID)
		if err != nil {
			return nil, err
		}
		for _, pa := range desc.GetPendingActivities() {
			if pa.GetActivityId() == info.ActivityID {
				return pa.GetLastFailure(), nil
			}
		}
		return nil, nil
	}}
}

func (l *lostSlices) InterceptActivity(
	_ context.Context,
	next interceptor.ActivityInboundInterceptor,
) interceptor.ActivityInboundInterceptor {
	a := &lostActivity{lost: l}
	a.Next = next
	return a
}

type lostActivity struct {
	interceptor.ActivityInboundInterceptorBase
	lost *lostSlices
}

func (a *lostActivity) ExecuteActivity(
	ctx context.Context,
	in *interceptor.ExecuteActivityInput,
) (any, error) {
	if info := activity.GetInfo(ctx); info.Attempt > 1 &&
		info.ActivityType.Name == bakeapi.BakeSliceActivity {
		a.lost.check(ctx, info)
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// check counts and logs the attempt before this one if a heartbeat
// timeout ended it; a failed look is logged and costs the slice nothing.
func (l *lostSlices) check(ctx context.Context, info activity.Info) {
	log := activity.GetLogger(ctx)
	f, err := l.lastFailure(ctx, info)
	switch {
	case err != nil:
		log.Warn("cannot tell how the slice's last attempt ended", "Error", err)
	case f.GetTimeoutFailureInfo().GetTimeoutType() == enums.TIMEOUT_TYPE_HEARTBEAT:
		l.metrics.SliceLost()
		log.Warn("the slice's last attempt was lost to a heartbeat timeout: "+
			"its worker died, hung or lost its network without stopping; "+
			"this attempt resumes from its checkpoints",
			"HeartbeatTimeout", info.HeartbeatTimeout)
	}
}
