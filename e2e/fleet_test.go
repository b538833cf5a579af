package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// The fleet's slice: one MLP of W=16 D=4 at 500,000 samples, about 50 ms of
// one core. With the fleet's 64 slices sharing 2 cores, one takes a few
// seconds of wall time, mostly waiting for a core, so all 64 are in flight
// at once; and its compute still outweighs what the orchestration spends
// per slice (about 33 ms of worker, server and MinIO CPU at W=4 D=1 in the
// large split), so what limits the fleet is its window, not the servers.
const (
	fleetWidth, fleetDepth = 16, 4
	fleetSamples           = 500_000
)

// TestFleet is a benchmark, not part of `make test`: `make bench-fleet` runs
// it (FLEET_WORKERS=64 FLEET_SLICES=2000), and docs/benchmarks.md ("A
// simulated fleet of 64 GPU workers") keeps its table. It starts a private
// dev stack, one control worker and FLEET_WORKERS GPU-role worker processes
// (CPU engine, one thread each), and bakes one split of FLEET_SLICES one-MLP
// slices with max-in-flight auto. Every worker must get work, as many
// slices as there are workers must be in flight at once, auto must count
// every worker, no slice may run twice, every run's history must stay below
// the server's warning, and the release must be byte-identical to a local
// bake of the same seeds. It prints a markdown table of what it measured.
func TestFleet(t *testing.T) {
	workers, n := fleetSize(t)
	s := newStack(t)
	// The local reference bakes every MLP in one command, on a loaded machine.
	s.cmdTimeout = 20 * time.Minute
	control := s.startWorker("control")
	// The production checkpoint interval: at the e2e's 200 ms, every MLP
	// slowed by 63 neighbours would checkpoint, which no fleet does.
	wcfg := s.baseConfig()
	section(wcfg, "worker")["checkpoint-every"] = "10s"
	cfgPath := s.writeConfig("fleet-worker", wcfg)
	var gpus []*proc
	for range workers {
		gpus = append(gpus, s.spawnWorker(cfgPath, "gpu", nil))
	}
	for _, p := range gpus {
		p.waitReady(t)
	}

	b := bakeSpec{
		ID:        "fleet",
		Width:     fleetWidth,
		Depth:     fleetDepth,
		NSamples:  fleetSamples,
		SliceSize: 1,
		Tag:       "fleet",
		Splits:    []splitSpec{{"public", "default", n, 11}},
	}
	cfg := s.bakeConfigMap(b)
	// A heartbeat a minute, as a fleet would set it (the production default
	// is 3m): the e2e's 2 s, for noticing a killed worker fast, would have 64
	// workers heartbeat about 40 times a second.
	pol := maps.Clone(policy)
	pol["slice-heartbeat"] = "1m"
	cfg["policy"] = pol

	pids := map[string]int{
		"temporal": serverPID(t, s, "temporal"),
		"minio":    serverPID(t, s, "minio"),
		"control":  control.cmd.Process.Pid,
	}
	cpu0 := map[string]time.Duration{}
	for name, pid := range pids {
		cpu0[name] = processCPU(t, pid)
	}
	var gpuCPU0 time.Duration
	for _, p := range gpus {
		gpuCPU0 += processCPU(t, p.cmd.Process.Pid)
	}
	load := sampleLoad(5 * time.Second)

	started := time.Now()
	s.mustWhestbake("bake", "--config-file", s.writeConfig("bake-fleet", cfg), "--id", b.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var out bakeapi.BakeOutput
	if err := s.tc.GetWorkflow(ctx, bakeapi.BakeWorkflowID(b.ID), "").Get(ctx, &out); err != nil {
		t.Fatalf("bake %s: %v", b.ID, err)
	}
	took := time.Since(started)
	loads := load()
	cpu := map[string]time.Duration{}
	for name, pid := range pids {
		cpu[name] = processCPU(t, pid) - cpu0[name]
	}
	var gpuCPU time.Duration
	var gpuRSS []int64
	for _, p := range gpus {
		gpuCPU += processCPU(t, p.cmd.Process.Pid)
		gpuRSS = append(gpuRSS, peakRSS(t, p.cmd.Process.Pid))
	}
	gpuCPU -= gpuCPU0

	// Every run of the split: its history, its slices and its window.
	id := bakeapi.SplitWorkflowID(b.ID, "public")
	var all []sliceRun
	var events, windows []int
	for _, r := range slices.Backward(s.runs(id)) {
		events = append(events, len(r.History.Events))
		if len(r.History.Events) >= historyWarning/2 {
			t.Errorf("a run of %s has %d events: want well below the %d of the server's warning",
				id, len(r.History.Events), historyWarning)
		}
		all = append(all, s.sliceRunsOf(r.History)...)
		var p bakeapi.SplitProgress
		v, err := s.tc.QueryWorkflow(ctx, id, r.ID, bakeapi.ProgressQuery)
		if err == nil {
			err = v.Get(&p)
		}
		if err != nil {
			t.Fatalf("progress of run %q of %s: %v", r.ID, id, err)
		}
		windows = append(windows, p.MaxInFlight)
	}
	s.noHistoryWarning(t)

	once := map[int]int{}
	perWorker := map[int]int{}
	retried := 0
	for _, r := range all {
		once[r.In.Slice]++
		if r.Attempt > 1 {
			retried++
			t.Logf("slice %d ran %d attempts on %s; the one before failed: %s",
				r.In.Slice, r.Attempt, r.Worker, r.LastFailure)
		}
		pid, _, _ := strings.Cut(r.Worker, "@")
		k, _ := strconv.Atoi(pid)
		perWorker[k]++
	}
	for k := range n {
		if once[k] != 1 {
			t.Errorf("slice %d completed %d times, want once", k, once[k])
		}
	}
	if retried > 0 {
		t.Errorf("%d slices needed a second attempt: want none in a run where nothing fails",
			retried)
		for _, p := range append(gpus, control) {
			lines := grepLines(p.output(), "level=WARN") + grepLines(p.output(), "level=ERROR")
			if lines != "" {
				t.Logf("%s:\n%s", p.name, lines)
			}
		}
	}
	var counts []int
	for _, p := range gpus {
		c := perWorker[p.cmd.Process.Pid]
		if c == 0 {
			t.Errorf("GPU worker %s (pid %d) ran no slice: every worker of the fleet must get work",
				p.name, p.cmd.Process.Pid)
		}
		counts = append(counts, c)
		delete(perWorker, p.cmd.Process.Pid)
	}
	if len(perWorker) > 0 {
		t.Errorf("slices ran on workers outside the fleet: %v", perWorker)
	}
	slices.Sort(counts)
	peak, full := peakOverlap(all)
	if peak != workers {
		t.Errorf("at most %d slices ran at once on %d GPU workers with max-in-flight auto, want %d",
			peak, workers, workers)
	}
	for i, w := range windows {
		if w != workers {
			t.Errorf("run %d of %d ended with an auto window of %d: want one slice per worker, %d",
				i+1, len(windows), w, workers)
		}
	}

	first, last := all[0].Started, all[0].Closed
	var busy time.Duration
	var latency, wait []time.Duration
	for _, r := range all {
		first = minTime(first, r.Started)
		last = maxTime(last, r.Closed)
		busy += r.Closed.Sub(r.Started)
		latency = append(latency, r.Closed.Sub(r.Started))
		wait = append(wait, r.Started.Sub(r.Scheduled))
	}
	slices.Sort(latency)
	slices.Sort(wait)
	p := func(xs []time.Duration, q int) time.Duration {
		return xs[len(xs)*q/100].Round(10 * time.Millisecond)
	}
	baking := last.Sub(first)
	perSlice := func(d time.Duration) string {
		return fmt.Sprintf("%.1f s total, %.1f ms per slice",
			d.Seconds(), float64(d.Microseconds())/1000/float64(n))
	}
	mb := func(b int64) string { return fmt.Sprintf("%.0f MB", megabytes(b)) }
	rows := [][2]string{
		{"bake, seeds to release",
			fmt.Sprintf("%s, %.1f slices/s", took.Round(time.Second), float64(n)/took.Seconds())},
		{"slices, first start to last close", fmt.Sprintf("%s, %.1f slices/s",
			baking.Round(time.Second), float64(n)/baking.Seconds())},
		{"slices per worker, min / median / max",
			fmt.Sprintf("%d / %d / %d", counts[0], counts[len(counts)/2], counts[len(counts)-1])},
		{"most slices in flight at once (history: started to closed)",
			fmt.Sprintf("%d, first after %s", peak, full.Sub(first).Round(100*time.Millisecond))},
		{"mean slices in flight (slice-seconds / slicing time)",
			fmt.Sprintf("%.1f", busy.Seconds()/baking.Seconds())},
		{"slice latency, started to closed: median / p95",
			fmt.Sprintf("%s / %s", p(latency, 50), p(latency, 95))},
		{"queue wait, scheduled to started: median / p95",
			fmt.Sprintf("%s / %s", p(wait, 50), p(wait, 95))},
		{"max-in-flight auto, each run's window", fmt.Sprint(windows)},
		{"split runs (continue-as-new), events each", fmt.Sprint(events)},
		{"slices retried", strconv.Itoa(retried)},
		{"Temporal server CPU", perSlice(cpu["temporal"])},
		{"MinIO CPU", perSlice(cpu["minio"])},
		{"GPU workers' CPU", perSlice(gpuCPU)},
		{"control worker CPU", perSlice(cpu["control"])},
		{"peak RSS: Temporal server / MinIO / control worker", fmt.Sprintf("%s / %s / %s",
			mb(peakRSS(t, pids["temporal"])), mb(peakRSS(t, pids["minio"])),
			mb(peakRSS(t, pids["control"])))},
		{"peak RSS of a GPU worker: min / median / max; sum", fmt.Sprintf("%s / %s / %s; %s",
			mb(slices.Min(gpuRSS)), mb(median(gpuRSS)), mb(slices.Max(gpuRSS)), mb(sum(gpuRSS)))},
		{"load average (1 min) while baking: min / mean / max",
			fmt.Sprintf("%.1f / %.1f / %.1f", slices.Min(loads), mean(loads), slices.Max(loads))},
	}
	var tb strings.Builder
	fmt.Fprintf(&tb, "\n%d GPU workers, %d one-MLP slices of W=%d D=%d N=%d:\n\n",
		workers, n, fleetWidth, fleetDepth, fleetSamples)
	tb.WriteString("| | |\n|---|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&tb, "| %s | %s |\n", r[0], r[1])
	}
	fmt.Print(tb.String())

	// The reference: the same seeds baked locally in one go (merging never
	// changes a row's bytes, so slicing does not matter).
	local := b
	local.SliceSize = n
	datasettest.SameParquet(t, s.download(b), s.localBake(local))
}

// fleetSize reads FLEET_WORKERS (the GPU workers; unset: skip, the fleet is
// a benchmark) and FLEET_SLICES (default 2000).
func fleetSize(t *testing.T) (workers, n int) {
	t.Helper()
	w := os.Getenv("FLEET_WORKERS")
	if w == "" {
		t.Skip("the fleet benchmark runs with FLEET_WORKERS set: make bench-fleet")
	}
	workers, err := strconv.Atoi(w)
	if err != nil || workers < 1 {
		t.Fatalf("FLEET_WORKERS=%q: want a number of GPU workers, such as 64", w)
	}
	n = 2000
	if v := os.Getenv("FLEET_SLICES"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < workers {
			t.Fatalf("FLEET_SLICES=%q: want a number of slices, at least FLEET_WORKERS", v)
		}
	}
	return workers, n
}

// sampleLoad reads the 1-minute load average every interval until the
// function it returns is called, which returns the samples.
func sampleLoad(interval time.Duration) func() []float64 {
	var mu sync.Mutex
	var out []float64
	read := func() {
		data, err := os.ReadFile("/proc/loadavg")
		if err != nil {
			return
		}
		f := strings.Fields(string(data))
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			mu.Lock()
			out = append(out, v)
			mu.Unlock()
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			read()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() []float64 {
		close(stop)
		<-done
		read()
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func median(xs []int64) int64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

func sum(xs []int64) int64 {
	var t int64
	for _, x := range xs {
		t += x
	}
	return t
}

func mean(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
