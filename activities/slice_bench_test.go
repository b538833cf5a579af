package activities_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// BenchmarkOneMLPSlice is the cost of a one-MLP slice of a tiny shape in a
// split of n MLPs, against a real MinIO: wall time, the worker's CPU time
// (this process: user + system, MinIO not included) and bytes allocated per
// slice. A slice's work must not grow with n; the split's one-off
// GenerateSeeds is logged.
//
//	go test ./activities -run '^$' -bench OneMLPSlice -benchtime 20x
func BenchmarkOneMLPSlice(b *testing.B) {
	cfg, bucket := devtest.StartStore(b)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg, bucket)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			a := &activities.Activities{
				Store:   st,
				Engine:  gpuengine.CPU{},
				Threads: 1,
				TempDir: b.TempDir(),
			}
			env := activityEnv(a)
			bakeID := fmt.Sprintf("bench-%d", n)
			seed := uint64(n)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			t0, c0 := time.Now(), cpuTime()
			v, err := env.ExecuteActivity(a.GenerateSeeds, seedsInput(bakeID, n, seed))
			if err != nil {
				b.Fatal(err)
			}
			var sd bakeapi.GenerateSeedsOutput
			if err := v.Get(&sd); err != nil {
				b.Fatal(err)
			}
			runtime.ReadMemStats(&m1)
			b.Logf(
				"GenerateSeeds of %d MLPs (once per split): %s wall, %s CPU, %d MB allocated",
				n,
				time.Since(t0).Round(time.Millisecond),
				(cpuTime() - c0).Round(time.Millisecond),
				(m1.TotalAlloc-m0.TotalAlloc)>>20,
			)
			spec := bakeapi.Spec{
				Width:    4,
				Depth:    2,
				NSamples: 256,
				Sampler:  "philox",
			}
			k := 0
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				// Slice k of n one-MLP slices: a new MLP every time, never a reused slice.
				in := sliceInput(bakeID, sd, k, k, k+1)
				in.Spec = spec
				if _, err := env.ExecuteActivity(a.BakeSlice, in); err != nil {
					b.Fatal(err)
				}
				k++
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(k), "cpu-ms/op")
		})
	}
}

// activityEnv is a test activity environment for a with SDK logging dropped.
func activityEnv(a *activities.Activities) *testsuite.TestActivityEnvironment {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return env
}

// cpuTime is the user + system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
