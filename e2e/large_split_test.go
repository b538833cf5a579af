package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// historyWarning is the event count at which the Temporal server warns about
// a workflow run's history (limit.historyCount.warn).
const historyWarning = 10_240

// TestLargeSplitContinuesAsNew: a split of 5,000 tiny MLPs in one-MLP slices
// (2.5x the old cap of 2,000 slices) on four GPU workers. Its workflow
// continues as new, so every run's history stays far below the server's
// warning, and the server logs no warning; every slice runs once; the release
// is byte-identical to a local bake of the same seeds.
func TestLargeSplitContinuesAsNew(t *testing.T) {
	const n, gpus = 5000, 4
	s := newStack(t)
	control := s.startWorker("control")
	var workers []*proc
	for range gpus {
		workers = append(workers, s.startWorker("gpu"))
	}
	b := bakeSpec{
		ID:          "large",
		Width:       4,
		Depth:       1,
		NSamples:    256,
		SliceSize:   1,
		MaxInFlight: 64,
		Tag:         "large",
		Splits:      []splitSpec{{"public", "default", n, 7}},
	}
	cfg := s.bakeConfigMap(b)
	// The merge of 5,000 partials is real work: the e2e's 1-minute bound,
	// meant to catch a stuck merge of a few slices, timed out once on a
	// machine loaded by other builds.
	pol := maps.Clone(policy)
	pol["merge-timeout"] = "10m"
	cfg["policy"] = pol
	started := time.Now()
	s.mustWhestbake("bake", "--config-file", s.writeConfig("bake-"+b.ID, cfg), "--id", b.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var out bakeapi.BakeOutput
	if err := s.tc.GetWorkflow(ctx, bakeapi.BakeWorkflowID(b.ID), "").Get(ctx, &out); err != nil {
		t.Fatalf("bake %s: %v", b.ID, err)
	}
	took := time.Since(started)

	// Every run of the split, newest first; each replays against today's code.
	id := bakeapi.SplitWorkflowID(b.ID, "public")
	runs := s.runs(id)
	for _, r := range runs {
		s.replayRun(t, id, r.ID)
	}
	if len(runs) < 2 {
		t.Errorf("%d slices ran in %d run: want the split to continue as new", n, len(runs))
	}
	slices := map[int]int{}
	for i, r := range runs {
		h := r.History
		if len(h.Events) >= historyWarning/2 {
			t.Errorf("run %d of %s has %d events: want well below the %d of the server's warning",
				len(runs)-i, id, len(h.Events), historyWarning)
		}
		for _, e := range h.Events {
			a := e.GetActivityTaskScheduledEventAttributes()
			if a != nil && a.GetActivityType().GetName() == bakeapi.BakeSliceActivity {
				var in bakeapi.BakeSliceInput
				err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in)
				if err != nil {
					t.Fatal(err)
				}
				slices[in.Slice]++
			}
		}
		t.Logf("run %d: %d events", len(runs)-i, len(h.Events))
	}
	for k := range n {
		if slices[k] != 1 {
			t.Errorf("slice %d scheduled %d times over all runs, want once", k, slices[k])
		}
	}
	s.noHistoryWarning(t)

	var gpuCPU time.Duration
	for _, w := range workers {
		gpuCPU += processCPU(t, w.cmd.Process.Pid)
	}
	t.Logf("%d one-MLP slices in %s (%.0f slices/s) over %d runs; "+
		"GPU workers' CPU %s (%.1f ms per slice); "+
		"Temporal server CPU %s, MinIO CPU %s; "+
		"control worker (seeds, merge) peak RSS %.0f MB",
		n, took.Round(time.Second), float64(n)/took.Seconds(), len(runs),
		gpuCPU.Round(time.Millisecond), float64(gpuCPU.Microseconds())/1000/n,
		processCPU(t, serverPID(t, s, "temporal")).Round(time.Millisecond),
		processCPU(t, serverPID(t, s, "minio")).Round(time.Millisecond),
		megabytes(peakRSS(t, control.cmd.Process.Pid)))

	// The reference: the same seeds baked locally in one go (merging never
	// changes a row's bytes, so slicing does not matter).
	local := b
	local.SliceSize = n
	datasettest.SameDataset(t, s.download(b), s.localBake(local))
}

// processCPU is the user + system CPU time of a live process, from /proc.
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) start at field 3.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// peakRSS is the peak resident set of a live process (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(
				strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM of %d: %q", pid, v)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// serverPID is the pid of one of the stack's servers (temporal, minio), by its pid file.
func serverPID(t *testing.T, s *stack, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.opts.Dir, "run", name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// noHistoryWarning fails t if the Temporal server warned about the size of a history.
func (s *stack) noHistoryWarning(t *testing.T) {
	t.Helper()
	if log, err := os.ReadFile(filepath.Join(s.opts.Dir, "logs", "temporal.log")); err != nil {
		t.Error(err)
	} else if strings.Contains(string(log), "exceeds warn limit") {
		t.Errorf("the Temporal server warned about a history:\n%s",
			grepLines(string(log), "exceeds warn limit"))
	}
}

func megabytes(n int64) float64 { return float64(n) / 1e6 }

func grepLines(text, what string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, what) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
