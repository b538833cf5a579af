package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bench/gate"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/settings"
)

// TemporalConfig is the Temporal workload's bake, relative to the module
// root; the suite supplies the addresses, credentials, bake ID and release
// tag through WHESTBAKE_* variables.
const TemporalConfig = "bench/temporal-bake.yaml"

const temporalWorkload = "temporal bake 8 MLPs W=64 D=4"

// Metric names of the Temporal bake.
const (
	historyEvents = "history events"
	s3Requests    = "S3 requests"
	s3Up          = "S3 written"
	s3Down        = "S3 read"
	workerRSS     = "worker peak RSS"
)

func temporalJob() job {
	m := func(name, unit string, k gate.Kind) gate.Metric {
		return gate.Metric{
			Workload: temporalWorkload,
			Name:     name,
			Unit:     unit,
			Kind:     k,
			Better:   gate.Lower,
		}
	}
	return job{
		metrics: []gate.Metric{
			m(historyEvents, "per slice", gate.Work),
			m(s3Requests, "per slice", gate.Work),
			m(s3Up, "KiB per slice", gate.Work),
			m(s3Down, "KiB per slice", gate.Work),
			m(workerRSS, "MiB", gate.Memory),
		},
		run: runTemporal,
	}
}

// temporalStack is the private dev stack of one run of the workload: the
// servers from bin/ on free loopback ports, never the dev stack's fixed
// ones, MinIO behind a counting proxy, and a client for the histories.
type temporalStack struct {
	opts     devstack.Options
	counter  *s3Counter
	temporal client.Client
	env      []string // what every whestbake process needs to reach the stack
}

func runTemporal(ctx context.Context, o Options, _ func(string, string) bool) (measured, error) {
	cfgFile := filepath.Join(o.Root, TemporalConfig)
	cfg, err := settings.Load(cfgFile, nil)
	if err != nil {
		return measured{}, err
	}
	nSlices := 0
	for _, sp := range cfg.Bake.Splits {
		nSlices += bakeapi.SliceCount(int(sp.NMLPs), cfg.Bake.SliceSize)
	}
	wb, err := o.build(ctx, "whestbake", starterPkg)
	if err != nil {
		return measured{}, err
	}
	worker, err := o.build(ctx, "whestbake-worker", workerPkg)
	if err != nil {
		return measured{}, err
	}
	st, err := startStack(ctx, o, cfg)
	if err != nil {
		return measured{}, err
	}
	defer st.stop()

	out := map[string][]float64{}
	add := func(name string, v float64) {
		k := gate.Metric{Workload: temporalWorkload, Name: name}.Key()
		out[k] = append(out[k], v)
	}
	for i := range o.Runs {
		id := fmt.Sprintf("bench-%s-%d", randomHex(4), i)
		o.logf("  temporal: bake %s (%d slices)", id, nSlices)
		st.counter.reset()
		rss, err := st.bake(ctx, o, wb, worker, cfgFile, id)
		if err != nil {
			return measured{}, err
		}
		events := 0
		ids := []string{bakeapi.BakeWorkflowID(id)}
		for _, sp := range cfg.Bake.Splits {
			ids = append(ids, bakeapi.SplitWorkflowID(id, sp.Name))
		}
		for _, wid := range ids {
			n, err := st.historyLength(ctx, wid)
			if err != nil {
				return measured{}, err
			}
			events += n
		}
		per := float64(nSlices)
		add(historyEvents, float64(events)/per)
		add(s3Requests, float64(st.counter.requests.Load())/per)
		add(s3Up, float64(st.counter.bytesUp.Load())/1024/per)
		add(s3Down, float64(st.counter.bytesDown.Load())/1024/per)
		add(workerRSS, rss/mib)
	}
	return measured{values: out}, nil
}

func startStack(ctx context.Context, o Options, cfg settings.Config) (*temporalStack, error) {
	bin := filepath.Join(o.Root, "bin")
	for _, c := range devstack.Components {
		if _, err := os.Stat(filepath.Join(bin, string(c))); err != nil {
			return nil, fmt.Errorf("%s is missing: run `make tools`", filepath.Join(bin, string(c)))
		}
	}
	ports, err := devstack.FreePorts(4)
	if err != nil {
		return nil, err
	}
	opts := devstack.DefaultOptions()
	opts.Dir = filepath.Join(o.Dir, "devstack")
	opts.BinDir = bin
	opts.TemporalPort = ports[0]
	opts.UIPort = ports[1]
	opts.MinIOPort = ports[2]
	opts.MinIOConsolePort = ports[3]
	opts.AccessKey = "bench"
	opts.SecretKey = "bench-" + randomHex(12)
	opts.Buckets = []string{cfg.S3.Bucket, cfg.Release.Bucket}
	st := &temporalStack{}
	o.logf("  temporal: starting MinIO and the Temporal dev server on free ports")
	for _, c := range devstack.Components {
		if opts, err = devstack.StartOnFreePorts(ctx, opts, c); err != nil {
			st.stop()
			return nil, err
		}
		st.opts = opts // from here on, stop stops what started
	}
	if st.counter, err = startS3Counter(opts.S3Config().Endpoint); err != nil {
		st.stop()
		return nil, err
	}
	st.temporal, err = client.Dial(client.Options{
		HostPort:  opts.TemporalAddr(),
		Namespace: cfg.Temporal.Namespace,
		Logger:    tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		st.stop()
		return nil, err
	}
	st.env = []string{
		settings.EnvName("temporal.address") + "=" + opts.TemporalAddr(),
		settings.EnvName("s3.endpoint") + "=" + st.counter.addr,
		settings.EnvName("s3.access-key") + "=" + opts.AccessKey,
		settings.EnvName("s3.secret-key") + "=" + opts.SecretKey,
	}
	return st, nil
}

func (st *temporalStack) stop() {
	if st.temporal != nil {
		st.temporal.Close()
	}
	if st.counter != nil {
		_ = st.counter.close()
	}
	if st.opts.Dir == "" {
		return
	}
	for _, c := range devstack.Components {
		_ = devstack.Stop(st.opts, c)
	}
}

// bake runs one bake with a fresh worker of role all, as `make demo` runs it,
// and returns the worker's peak RSS in bytes, taken once it has stopped.
func (st *temporalStack) bake(
	ctx context.Context,
	o Options,
	wb, worker, cfgFile, id string,
) (float64, error) {
	logPath := filepath.Join(o.Dir, "worker-"+id+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	w := exec.Command(worker, "--role", "all", "--config-file", cfgFile)
	w.Env = childEnv(st.env)
	w.Stdout, w.Stderr = logf, logf
	if err := w.Start(); err != nil {
		return 0, err
	}
	exited := make(chan struct{})
	go func() {
		_ = w.Wait()
		close(exited)
	}()
	// stopWorker asks for a graceful stop, the worker's own SIGTERM path,
	// and kills after a while; a killed process still reports its peak RSS.
	stopWorker := func() {
		_ = w.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = w.Process.Kill()
			<-exited
		}
	}
	if err := waitReady(ctx, logPath, exited); err != nil {
		stopWorker()
		return 0, err
	}
	env := append(slices.Clone(st.env), settings.EnvName("release.tag")+"="+id)
	_, berr := run(ctx, o.Dir, env, wb, "bake", "--config-file", cfgFile, "--id", id, "--wait")
	stopWorker()
	if berr != nil {
		return 0, fmt.Errorf("%v (worker log %s)", berr, logPath)
	}
	return peakRSS(w.ProcessState), nil
}

// waitReady waits for the worker's "worker ready" log line.
func waitReady(ctx context.Context, logPath string, exited <-chan struct{}) error {
	deadline := time.After(time.Minute)
	for {
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "worker ready") {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("the worker exited before it was ready (log %s)", logPath)
		case <-deadline:
			return fmt.Errorf("the worker was not ready after a minute (log %s)", logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// historyLength counts the events of a workflow's latest run.
func (st *temporalStack) historyLength(ctx context.Context, workflowID string) (int, error) {
	it := st.temporal.GetWorkflowHistory(ctx, workflowID, "", false,
		enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			return 0, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		n++
	}
	return n, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
