// Package worker builds and runs the Temporal workers of a bake. The control
// role polls bakeapi.ControlQueue: both workflows and the CPU activities
// seeds, merge, combine and push. The gpu role polls the GPU queue with one
// BakeSlice, or NameSplit, which needs the salt only GPU workers hold, at a
// time and no workflows: one process per GPU, since a workflow worker on a
// GPU host would delay workflow tasks when the host dies. The all role runs
// both in one process, for development and the demo.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/hostinfo"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/metrics"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/temporalconn"
	"github.com/whestbake/whestbake/internal/version"
	"github.com/whestbake/whestbake/workflows"
)

// GPUStopTimeout is how long a stopping GPU worker lets its slice save a
// checkpoint and hand back before the activity is cancelled.
const GPUStopTimeout = 3 * time.Minute

// Run checks cfg's values, the files it names and the scratch directory,
// connects to Temporal and S3, starts the workers of cfg.Worker.Role and
// blocks until ctx is done; then it stops them gracefully: a running slice
// checkpoints its MLP and is retried elsewhere at once.
func Run(ctx context.Context, cfg settings.Config, log *slog.Logger) error {
	cfg, err := preflight.Worker(cfg)
	if err != nil {
		return err
	}
	log.Info("starting whestbake worker", "config", cfg)
	logScratch(log, cfg.Worker.Scratch())
	// Metrics first: a taken port fails at once, and an orchestrator's
	// liveness probe answers while the connections below are made.
	health := &metrics.Health{}
	var m *metrics.Worker
	if addr := cfg.Worker.MetricsListen; addr != "" {
		var err error
		if m, err = metrics.New(cfg.Worker.Role, version.Version); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		srv, err := metrics.Serve(addr, m, health)
		if err != nil {
			return err
		}
		defer srv.Close()
		log.Info(
			"serving metrics",
			"addr", srv.Addr(),
			"binding", metrics.Binding(srv.Addr()),
			"paths", "/metrics /healthz /readyz",
		)
	}
	st, err := store.Open(ctx, cfg.StoreConfig(), cfg.S3.Bucket)
	if err != nil {
		return err
	}
	c, err := temporalconn.Dial(ctx, cfg.Temporal.Conn(), log, func(o *client.Options) {
		if m != nil {
			o.MetricsHandler = m.SDKHandler()
		}
	})
	if err != nil {
		return err
	}
	defer c.Close()
	ws, err := build(c, cfg, st, m, log)
	if err != nil {
		return err
	}
	for i, w := range ws {
		if err := w.Start(); err != nil {
			stopAll(ws[:i])
			return fmt.Errorf("starting the %s worker: %w", roleNames(cfg.Worker.Role)[i], err)
		}
	}
	health.Set(metrics.Running, func(ctx context.Context) error {
		_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	})
	log.Info(
		"worker ready",
		"role", cfg.Worker.Role,
		"control_queue", bakeapi.ControlQueue,
		"gpu_queue", cfg.Bake.GPUQueue,
	)
	<-ctx.Done()
	health.Set(metrics.Stopping, nil)
	log.Info(
		"stopping: running slices save their checkpoint and hand back",
		"timeout", GPUStopTimeout,
	)
	stopAll(ws)
	log.Info("stopped")
	return nil
}

// logScratch reports where the worker's temporary files go and the room
// left there: a merge copies a split through it, so an operator reads at
// start whether the disk can hold one.
func logScratch(log *slog.Logger, dir string) {
	free, err := hostinfo.DiskFree(dir)
	if err != nil {
		log.Warn("scratch directory: cannot tell its free space", "dir", dir, "error", err)
		return
	}
	log.Info("scratch directory", "dir", dir, "free", bytesize.Format(free), "free_bytes", free)
}

// build creates the workers of the role without starting them.
func build(
	c client.Client,
	cfg settings.Config,
	st *store.Store,
	m *metrics.Worker,
	log *slog.Logger,
) ([]sdkworker.Worker, error) {
	acts := &activities.Activities{
		Store:           st,
		Threads:         cfg.Worker.Threads,
		CheckpointEvery: cfg.Worker.CheckpointEvery,
		StallTimeout:    cfg.Worker.StallTimeout,
		TempDir:         cfg.Worker.Scratch(),
		MaxMemory:       int64(cfg.Worker.MaxMemory),
		Metrics:         m,
		HubToken: func() (string, error) {
			return hub.Token(cfg.Release.Hub.TokenFile, os.Getenv)
		},
		Salt: func() (seeds.Salt, error) { return mlps.EnvSalt(os.Getenv) },
	}
	var ws []sdkworker.Worker
	for _, role := range roleNames(cfg.Worker.Role) {
		if role == settings.RoleControl {
			ws = append(ws, controlWorker(c, acts))
			continue
		}
		eng, err := openEngine(cfg.Worker.Device)
		if err != nil {
			return nil, err
		}
		acts.Engine = eng
		d := eng.Describe()
		log.Info(
			"slice engine",
			"engine", d.Engine,
			"device", d.Device,
			"device_name", d.DeviceName,
			"kernel", d.Kernel,
			"memory_bytes", d.MemoryBytes,
			"threads", cfg.Worker.Threads,
		)
		m.Device(d.Engine, d.Device, d.DeviceName, d.Kernel, d.MemoryBytes)
		ws = append(ws, gpuWorker(c, cfg.Bake.GPUQueue, acts, newLostSlices(c, m)))
	}
	return ws, nil
}

func roleNames(role string) []string {
	if role == settings.RoleAll {
		return []string{settings.RoleControl, settings.RoleGPU}
	}
	return []string{role}
}

// controlWorker runs the workflows and the CPU activities.
func controlWorker(c client.Client, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, bakeapi.ControlQueue, sdkworker.Options{})
	workflows.Register(w)
	activities.RegisterControl(w, acts)
	return w
}

// gpuWorker runs one activity, BakeSlice or NameSplit, at a time: slots are reserved before polling,
// so a busy GPU takes no task another GPU could start.
// Each retried slice is first asked by lostSlices whether a lost host ended
// its last attempt.
func gpuWorker(
	c client.Client,
	queue string,
	acts *activities.Activities,
	lost *lostSlices,
) sdkworker.Worker {
	w := sdkworker.New(c, queue, sdkworker.Options{
		DisableWorkflowWorker:              true,
		MaxConcurrentActivityExecutionSize: 1,
		WorkerStopTimeout:                  GPUStopTimeout,
		Interceptors:                       []interceptor.WorkerInterceptor{lost},
	})
	activities.RegisterGPU(w, acts)
	return w
}

func stopAll(ws []sdkworker.Worker) {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(w.Stop)
	}
	wg.Wait()
}
