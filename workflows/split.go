package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/whestbake/whestbake/bakeapi"
)

// SplitWorkflow fans the split's slices out to the GPU queue, at most
// MaxInFlight at a time, then merges them.
func SplitWorkflow(ctx workflow.Context, in bakeapi.SplitInput) (bakeapi.SplitOutput, error) {
	var out bakeapi.SplitOutput
	n := in.Split.NMLPs
	count := bakeapi.SliceCount(n, in.SliceSize)
	prog := bakeapi.SplitProgress{Split: in.Split.Name, Stage: bakeapi.StageBaking, MLPsTotal: n, SlicesTotal: count, StartedAt: workflow.Now(ctx)}
	if err := workflow.SetQueryHandler(ctx, bakeapi.ProgressQuery, func() (bakeapi.SplitProgress, error) { return prog, nil }); err != nil {
		return out, err
	}
	// Progress gauges for the fleet dashboard's ETA, through the SDK's
	// metrics handler: not commands, so they change no history, and the SDK
	// mutes them while replaying. After a control worker restarts they show
	// again with the next finished slice.
	mh := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"bake_id": in.BakeID, "split": in.Split.Name})
	mh.Gauge(MetricSplitMLPs).Update(float64(n))

	// Step 1. Slice k covers whestbench's --slice k/count: [k·n/count, (k+1)·n/count).
	ranges := make([]bakeapi.Range, count)
	for k := range ranges {
		r, err := bakeapi.SliceRange(k, count, n)
		if err != nil {
			return out, err
		}
		ranges[k] = r
	}

	// Step 2. Sliding window of BakeSlice activities.
	prefixes := make([]string, count)
	sel := workflow.NewSelector(ctx)
	var firstErr error
	next, running := 0, 0
	report := func() {
		mh.Gauge(MetricSplitMLPsDone).Update(float64(prog.MLPsDone))
		mh.Gauge(MetricSplitSlicesRunning).Update(float64(running))
	}
	start := func(k int) {
		r := ranges[k]
		actx := sliceOptions(ctx, in.Policy, in.GPUQueue, fmt.Sprintf("%s MLPs %d-%d", in.Split.Name, r.Start, r.End-1))
		f := workflow.ExecuteActivity(actx, bakeapi.BakeSliceActivity, bakeapi.BakeSliceInput{
			BakeID: in.BakeID, Split: in.Split.Name, Config: in.Split.Config, Slice: k, Start: r.Start, End: r.End,
			NMLPs: n, SeedsKey: in.Seeds.SeedsKey, SeedsSHA256: in.Seeds.SHA256, Spec: in.Spec,
			Fingerprint: in.Split.Fingerprint, CreatedAt: in.CreatedAt})
		running++
		sel.AddFuture(f, func(f workflow.Future) {
			running--
			var res bakeapi.BakeSliceOutput
			if err := f.Get(ctx, &res); err != nil {
				if firstErr == nil {
					firstErr = failed(err, "slice %d (MLPs %d-%d) of split %s", k, r.Start, r.End-1, in.Split.Name)
				}
				return
			}
			prefixes[k] = res.Prefix
			prog.SlicesDone++
			prog.MLPsDone += r.Len()
			elapsed := workflow.Now(ctx).Sub(prog.StartedAt)
			prog.ETA = prog.StartedAt.Add(time.Duration(float64(elapsed) * float64(n) / float64(prog.MLPsDone)))
			report()
		})
	}
	for {
		for firstErr == nil && next < count && running < in.MaxInFlight {
			start(next)
			next++
		}
		if running == 0 {
			break
		}
		prog.SlicesRunning = running
		report()
		sel.Select(ctx) // on a failure, let the running slices finish: their MLPs are kept for a retry
	}
	if firstErr != nil {
		return out, firstErr
	}

	// Step 3. Merge the slices into the complete split.
	prog.Stage, prog.SlicesRunning = bakeapi.StageMerging, 0
	report()
	var m bakeapi.MergeSplitOutput
	mctx := controlOptions(ctx, in.Policy, in.Policy.MergeTimeout, "merge split "+in.Split.Name)
	if err := workflow.ExecuteActivity(mctx, bakeapi.MergeSplitActivity, bakeapi.MergeSplitInput{
		BakeID: in.BakeID, Split: in.Split.Name, Slices: prefixes, CreatedAt: in.CreatedAt}).Get(ctx, &m); err != nil {
		return out, failed(err, "merge of split %s", in.Split.Name)
	}
	prog.Stage = bakeapi.StageDone
	return bakeapi.SplitOutput{MergedPrefix: m.Prefix, ManifestSHA256: m.ManifestSHA256, NMLPs: m.NMLPs, Slices: count}, nil
}
