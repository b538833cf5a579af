// Package metrics is what a whestbake worker tells Prometheus: the Temporal
// SDK's own metrics and ours, on one registry served at /metrics. The SDK's
// come through its maintained OpenTelemetry integration,
// go.temporal.io/sdk/contrib/opentelemetry, exported by OpenTelemetry's
// Prometheus exporter.
//
// Ours, all prefixed whestbake_: engine throughput in samples and effective
// FLOPs, 2·W²·D per sample, as counters and as the current rate; MLPs and
// slices by outcome; slice attempts and failures by error type; attempts
// lost to heartbeat timeouts, each a dead host; the age of the running
// MLP's last checkpoint; and the device. The workflows add per-split
// progress gauges through the SDK handler, in workflows.Register.
package metrics

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/rows"
)

// Worker holds one worker process's metrics. A nil *Worker records nothing,
// so code that runs without metrics, such as tests and the local CLI, needs
// no checks.
type Worker struct {
	reg *prometheus.Registry
	sdk client.MetricsHandler

	samples, flops         *prometheus.CounterVec
	samplesRate, flopsRate *prometheus.GaugeVec
	mlps, slices           *prometheus.CounterVec
	attempts, failures     *prometheus.CounterVec
	checkpoints, damaged   prometheus.Counter
	lost                   prometheus.Counter
	running                prometheus.Gauge
	device, memory         *prometheus.GaugeVec

	// lastCheckpoint is the unix nanoseconds of the running MLP's last
	// checkpoint or of its start, 0 when no MLP runs.
	lastCheckpoint atomic.Int64
}

// New builds the registry: Go runtime and process collectors, the SDK's
// metrics and ours; role and version go into whestbake_worker_info.
func New(role, version string) (*Worker, error) {
	reg := prometheus.NewRegistry()
	w := &Worker{reg: reg}
	f := factory{reg: reg}
	engine := []string{"engine", "device"}
	w.samples = f.counterVec(
		"whestbake_engine_samples_total",
		"Monte Carlo samples the slice engine computed.",
		engine,
	)
	w.flops = f.counterVec(
		"whestbake_engine_flops_total",
		"Effective floating-point operations of the slice engine (2·width²·depth per sample).",
		engine,
	)
	w.samplesRate = f.gaugeVec(
		"whestbake_engine_samples_per_second",
		"Samples per second of the MLP in progress, over its last progress step; 0 when idle.",
		engine,
	)
	w.flopsRate = f.gaugeVec(
		"whestbake_engine_flops_per_second",
		"Effective FLOP/s of the MLP in progress, over its last progress step; 0 when idle.",
		engine,
	)
	w.mlps = f.counterVec(
		"whestbake_mlps_total",
		"MLPs a slice attempt finished, by outcome: computed, resumed (from a checkpoint) "+
			"or reused (finished by an earlier attempt).",
		[]string{"outcome"},
	)
	w.slices = f.counterVec(
		"whestbake_slices_total",
		"Slices committed, by outcome: computed, resumed (reusing earlier attempts' MLPs) "+
			"or reused (committed by an earlier attempt).",
		[]string{"outcome"},
	)
	w.attempts = f.counterVec(
		"whestbake_slice_attempts_total",
		"BakeSlice attempts started; retry is \"true\" from the second attempt on.",
		[]string{"retry"},
	)
	w.failures = f.counterVec(
		"whestbake_slice_failures_total",
		"BakeSlice attempts that failed, by error type (bakeapi's types, Canceled, Other).",
		[]string{"type"},
	)
	w.checkpoints = f.counter(
		"whestbake_checkpoints_saved_total",
		"Engine checkpoints saved to S3.",
	)
	w.lost = f.counter(
		"whestbake_slice_heartbeat_timeouts_total",
		"BakeSlice attempts that a heartbeat timeout ended: their worker died, hung or "+
			"lost its network without stopping. Counted by the worker that takes the "+
			"slice's next attempt.",
	)
	w.damaged = f.counter(
		"whestbake_damaged_objects_total",
		"Damaged objects a slice found in S3 "+
			"(results, checkpoints, identity blocks, a partial's manifest), "+
			"discarded and recomputed.",
	)
	w.running = f.gauge("whestbake_slices_running", "BakeSlice attempts running in this process.")
	w.device = f.gaugeVec(
		"whestbake_device_info",
		"The slice engine's device (value 1).",
		[]string{"engine", "device", "device_name", "kernel"},
	)
	w.memory = f.gaugeVec(
		"whestbake_device_memory_bytes",
		"Memory of the slice engine's device (GPU memory, or host memory for the CPU engine).",
		[]string{"device"},
	)
	// Every series a slice can produce starts at 0, so that dashboards and
	// alerts that use increase() and absent() see them before the first event.
	for _, t := range []string{
		bakeapi.ErrEngineStalled,
		bakeapi.ErrWorkerStopping,
		bakeapi.ErrInvalidConfig,
		bakeapi.ErrInvalidSeeds,
		bakeapi.ErrCorruptPartial,
		bakeapi.ErrFingerprintMismatch,
		bakeapi.ErrStoreAccess,
		bakeapi.ErrStoreUnavailable,
		"Canceled",
		"Other",
	} {
		w.failures.WithLabelValues(t)
	}
	for _, o := range rows.Outcomes {
		w.mlps.WithLabelValues(string(o))
		w.slices.WithLabelValues(string(o))
	}
	w.attempts.WithLabelValues("false")
	w.attempts.WithLabelValues("true")
	workerInfo := []string{"role", "version"}
	info := f.gaugeVec("whestbake_worker_info", "This worker (value 1).", workerInfo)
	info.WithLabelValues(role, version).Set(1)
	f.register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "whestbake_checkpoint_age_seconds",
		Help: "Seconds since the running MLP last saved a checkpoint (or started); " +
			"0 when no MLP runs. Work lost if the host dies now.",
	}, w.checkpointAge))
	f.register(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)

	// The SDK's metrics: counters as monotonic counters, as the SDK
	// documents them ever-increasing, so Prometheus sees *_total counters.
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, err
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	w.sdk = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                provider.Meter("temporal-sdk-go"),
		UseMonotonicCounters: true,
		// A metric the exporter refuses must not take a worker down.
		OnError: func(error) {},
	})
	return w, f.err
}

// factory registers metrics, keeping the first error.
type factory struct {
	reg *prometheus.Registry
	err error
}

func (f *factory) register(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := f.reg.Register(c); err != nil && f.err == nil {
			f.err = err
		}
	}
}

func (f *factory) counterVec(name, help string, labels []string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.register(c)
	return c
}

func (f *factory) gaugeVec(name, help string, labels []string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.register(g)
	return g
}

func (f *factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.register(c)
	return c
}

func (f *factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.register(g)
	return g
}

// Registry is what /metrics serves.
func (w *Worker) Registry() *prometheus.Registry { return w.reg }

// SDKHandler is the Temporal client's metrics handler, for client.Options.MetricsHandler.
func (w *Worker) SDKHandler() client.MetricsHandler { return w.sdk }

// Device records the slice engine's device.
func (w *Worker) Device(engine, device, name, kernel string, memoryBytes int64) {
	if w == nil {
		return
	}
	w.device.WithLabelValues(engine, device, name, kernel).Set(1)
	if memoryBytes > 0 {
		w.memory.WithLabelValues(device).Set(float64(memoryBytes))
	}
	// Show the engine at rate 0 before its first slice, so dashboards have a series.
	w.samples.WithLabelValues(engine, device)
	w.flops.WithLabelValues(engine, device)
	w.samplesRate.WithLabelValues(engine, device)
	w.flopsRate.WithLabelValues(engine, device)
}

// SliceStarted counts an attempt; the returned func ends it with the
// attempt's error, nil on success.
func (w *Worker) SliceStarted(attempt int32) func(err error) {
	if w == nil {
		return func(error) {}
	}
	retry := "false"
	if attempt > 1 {
		retry = "true"
	}
	w.attempts.WithLabelValues(retry).Inc()
	w.running.Inc()
	return func(err error) {
		w.running.Dec()
		if err != nil {
			w.failures.WithLabelValues(ErrorType(err)).Inc()
		}
	}
}

// SliceDone counts a committed slice, labelled with its outcome.
func (w *Worker) SliceDone(outcome rows.Outcome) {
	if w != nil {
		w.slices.WithLabelValues(string(outcome)).Inc()
	}
}

// SliceLost counts a slice attempt that a heartbeat timeout ended, which
// the worker taking the next attempt learns from Temporal.
func (w *Worker) SliceLost() {
	if w != nil {
		w.lost.Inc()
	}
}

// Damaged counts a damaged object that a slice discarded to recompute it.
func (w *Worker) Damaged() {
	if w != nil {
		w.damaged.Inc()
	}
}

// MLPDone counts a finished MLP, labelled with its outcome.
func (w *Worker) MLPDone(outcome rows.Outcome) {
	if w != nil {
		w.mlps.WithLabelValues(string(outcome)).Inc()
	}
}

// Engine returns the progress recorder of one MLP on engine/device with
// flopsPerSample, starting at startSamples, a resumed MLP's checkpoint.
// It also starts the checkpoint clock; call Done when the MLP ends.
func (w *Worker) Engine(
	engine, device string,
	flopsPerSample float64,
	startSamples int64,
) *MLPProgress {
	if w == nil {
		return nil
	}
	w.lastCheckpoint.Store(time.Now().UnixNano())
	return &MLPProgress{
		worker:         w,
		engine:         engine,
		device:         device,
		flopsPerSample: flopsPerSample,
		lastSamples:    startSamples,
		lastAt:         time.Now(),
	}
}

// MLPProgress turns an engine's cumulative sample counts into the counters
// and the current rate.
type MLPProgress struct {
	worker         *Worker
	engine, device string
	flopsPerSample float64
	mu             sync.Mutex
	// lastSamples is the count at the last progress step, taken at lastAt.
	lastSamples int64
	lastAt      time.Time
}

// Samples records that the MLP has samplesDone samples in total now.
func (p *MLPProgress) Samples(samplesDone int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d := samplesDone - p.lastSamples
	if d <= 0 {
		return
	}
	now := time.Now()
	dt := now.Sub(p.lastAt).Seconds()
	p.lastSamples = samplesDone
	p.lastAt = now
	samples := float64(d)
	flops := samples * p.flopsPerSample
	p.worker.samples.WithLabelValues(p.engine, p.device).Add(samples)
	p.worker.flops.WithLabelValues(p.engine, p.device).Add(flops)
	if dt > 0 {
		p.worker.samplesRate.WithLabelValues(p.engine, p.device).Set(samples / dt)
		p.worker.flopsRate.WithLabelValues(p.engine, p.device).Set(flops / dt)
	}
}

// Checkpointed records a checkpoint saved to S3.
func (p *MLPProgress) Checkpointed() {
	if p == nil {
		return
	}
	p.worker.checkpoints.Inc()
	p.worker.lastCheckpoint.Store(time.Now().UnixNano())
}

// Done ends the MLP: no MLP runs, the rate drops to 0 until the next.
func (p *MLPProgress) Done() {
	if p == nil {
		return
	}
	p.worker.lastCheckpoint.Store(0)
	p.worker.samplesRate.WithLabelValues(p.engine, p.device).Set(0)
	p.worker.flopsRate.WithLabelValues(p.engine, p.device).Set(0)
}

func (w *Worker) checkpointAge() float64 {
	t := w.lastCheckpoint.Load()
	if t == 0 {
		return 0
	}
	return time.Since(time.Unix(0, t)).Seconds()
}

// ErrorType is the label of a failed attempt: the Temporal application
// error's type, one of bakeapi.Err*, Canceled, or Other. The set stays
// small, as Prometheus labels must.
func ErrorType(err error) string {
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	switch {
	case errors.As(err, &app) && app.Type() != "":
		return app.Type()
	case errors.As(err, &canceled), strings.Contains(err.Error(), "context canceled"):
		return "Canceled"
	}
	return "Other"
}
