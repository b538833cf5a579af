package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bench"
	"github.com/whestbake/whestbake/internal/bench/gate"
)

// Metric names of the engine workloads.
const (
	vsNumpy       = "speed vs numpy peer"
	vsBase        = "speed vs baseline build"
	enginePeakRSS = "peak RSS"
	allocs        = "allocations"
	heapBytes     = "heap allocated"
)

// engineThreads is the thread count of every engine and peer run. One thread
// is what makes CPU time a measure of the work: with one thread per process
// the neighbours on a shared machine delay a run's wall time but hardly
// change the CPU time it needs. Thread scaling is `make bench`'s business.
const engineThreads = 1

// samplers are the CPU engines, by the sampler that selects them.
var samplers = []bakeapi.Sampler{bakeapi.SamplerPhilox, bakeapi.SamplerNumpy}

func engineWorkload(s bakeapi.Sampler, w, d int) string {
	return fmt.Sprintf("engine %s W=%d D=%d", s, w, d)
}

// engineJob measures both CPU engines at one shape, n samples per timed run.
func engineJob(w, d int, n int64) job {
	var ms []gate.Metric
	for _, s := range samplers {
		wl := engineWorkload(s, w, d)
		ms = append(ms,
			gate.Metric{Workload: wl, Name: vsNumpy, Unit: "×",
				Kind: gate.Speed, Better: gate.Higher},
			gate.Metric{Workload: wl, Name: vsBase, Unit: "×",
				Kind: gate.Speed, Better: gate.Higher, InRun: true},
			gate.Metric{Workload: wl, Name: enginePeakRSS, Unit: "MiB",
				Kind: gate.Memory, Better: gate.Lower},
			gate.Metric{Workload: wl, Name: allocs, Unit: "per sample",
				Kind: gate.Work, Better: gate.Lower, Floor: allocsFloor},
			gate.Metric{Workload: wl, Name: heapBytes, Unit: "B per sample",
				Kind: gate.Work, Better: gate.Lower, Floor: heapFloor},
		)
	}
	run := func(ctx context.Context, o Options, want func(string, string) bool) (measured, error) {
		return runEngines(ctx, o, want, w, d, n)
	}
	return job{metrics: ms, run: run}
}

// The engines' hot loops allocate next to nothing, so their marginal
// counts per sample are mostly what the runtime does on the side: a
// sync.Pool buffer taken afresh when the goroutine ran on another P, a
// checkpoint more or less in the warm-up. A change smaller than these floors
// is that noise; an allocation per block of rows is far above them: a pad
// of 12 KiB per 192 rows is 64 B per sample and layer.
const (
	allocsFloor = 0.001 // allocations per sample
	heapFloor   = 1     // bytes per sample
)

// step is one timed child run of an engine round.
type step struct {
	name string
	run  func(context.Context) (throughput float64, err error)
}

// runEngines runs EngineReps rounds. A round runs, one after the other, the
// numpy peer, whestbench's create_dataset timed by its CPU time in
// whestbench's sampling function, and each engine of this tree and of the baseline build, each in
// its own process; odd rounds run them in reverse order, A B B A, so a machine that
// slows down or speeds up during a round favours neither side.
// Each ratio is formed within one round, and the gate takes their median.
func runEngines(
	ctx context.Context,
	o Options,
	want func(workload, name string) bool,
	w, d int,
	n int64,
) (measured, error) {
	out := measured{values: map[string][]float64{}, peers: map[string]string{}}
	add := func(s bakeapi.Sampler, name string, v float64) {
		k := gate.Metric{Workload: engineWorkload(s, w, d), Name: name}.Key()
		out.values[k] = append(out.values[k], v)
	}
	var (
		peer      float64 // the numpy peer's samples per CPU second
		peerRanOn string  // what the peer ran
	)
	cur, ref := map[bakeapi.Sampler]float64{}, map[bakeapi.Sampler]float64{}
	var steps []step
	wantAny := func(name string) bool {
		return slices.ContainsFunc(samplers, func(s bakeapi.Sampler) bool {
			return want(engineWorkload(s, w, d), name)
		})
	}
	if wantAny(vsNumpy) {
		script := filepath.Join(o.Root, bench.PeerScript)
		steps = append(steps, step{"numpy peer", func(ctx context.Context) (float64, error) {
			shape := bench.Config{Width: w, Depth: d, NSamples: n}
			r := bench.NumpyPeer(ctx, o.Python, script, shape, engineThreads)
			if r.Err != nil {
				return 0, r.Err
			}
			if r.CPUSeconds <= 0 {
				return 0, fmt.Errorf("%s reported no cpu_seconds", script)
			}
			peer = float64(r.Config.NSamples) / r.CPUSeconds
			peerRanOn = r.RanOn
			return peer, nil
		}})
	}
	for _, s := range samplers {
		wl := engineWorkload(s, w, d)
		curMetrics := []string{vsNumpy, vsBase, enginePeakRSS, allocs, heapBytes}
		needCur := slices.ContainsFunc(curMetrics, func(name string) bool { return want(wl, name) })
		if needCur {
			thisBuild := func(ctx context.Context) (float64, error) {
				rep, rss, err := probeChild(ctx, o.Self, s, w, d, n, o.SlowDown)
				if err != nil {
					return 0, err
				}
				cur[s] = float64(rep.Samples) / rep.CPUSeconds
				if want(wl, enginePeakRSS) {
					add(s, enginePeakRSS, rss/mib)
				}
				// A difference of two counts can dip below 0 when a stray
				// runtime allocation falls in the warm-up; none is a count of 0.
				if want(wl, allocs) {
					add(s, allocs, max(0, rep.AllocsPerSample))
				}
				if want(wl, heapBytes) {
					add(s, heapBytes, max(0, rep.BytesPerSample))
				}
				return cur[s], nil
			}
			steps = append(steps, step{"this build " + string(s), thisBuild})
		}
		if want(wl, vsBase) {
			baselineBuild := func(ctx context.Context) (float64, error) {
				rep, _, err := probeChild(ctx, o.Ref, s, w, d, n, 0)
				if err != nil {
					return 0, err
				}
				ref[s] = float64(rep.Samples) / rep.CPUSeconds
				return ref[s], nil
			}
			steps = append(steps, step{"baseline build " + string(s), baselineBuild})
		}
	}
	for round := range o.EngineReps {
		order := slices.Clone(steps)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, st := range order {
			thr, err := st.run(ctx)
			if err != nil {
				return measured{}, fmt.Errorf("%s at W=%d D=%d: %w", st.name, w, d, err)
			}
			o.logf("  W=%d D=%d round %d: %-22s %9.0f samples per CPU second",
				w, d, round+1, st.name, thr)
		}
		for _, s := range samplers {
			wl := engineWorkload(s, w, d)
			if want(wl, vsNumpy) {
				add(s, vsNumpy, cur[s]/peer)
				out.peers[gate.Metric{Workload: wl, Name: vsNumpy}.Key()] = peerRanOn
			}
			if want(wl, vsBase) {
				add(s, vsBase, cur[s]/ref[s])
			}
		}
	}
	return out, nil
}

// probeChild runs `bin probe` for one engine and returns its report and the
// child's peak RSS in bytes. slowDown > 0 asks the probe to burn that
// fraction of its CPU time again, as Options.SlowDown asks; only this tree's
// build knows the flag.
func probeChild(
	ctx context.Context,
	bin string,
	s bakeapi.Sampler,
	w, d int,
	n int64,
	slowDown float64,
) (ProbeReport, float64, error) {
	args := []string{"probe",
		"--sampler", string(s),
		"--width", strconv.Itoa(w),
		"--depth", strconv.Itoa(d),
		"--n-samples", strconv.FormatInt(n, 10),
		"--threads", strconv.Itoa(engineThreads),
	}
	if slowDown > 0 {
		args = append(args, "--slow-down", strconv.FormatFloat(slowDown, 'g', -1, 64))
	}
	c, err := run(ctx, "", nil, bin, args...)
	if err != nil {
		return ProbeReport{}, 0, err
	}
	var rep ProbeReport
	err = json.Unmarshal(c.stdout, &rep)
	if err != nil || rep.CPUSeconds <= 0 || rep.Samples != n {
		return ProbeReport{}, 0, fmt.Errorf("%s probe printed %q, "+
			"want one JSON report of %d samples", bin, c.stdout, n)
	}
	return rep, c.peakRSS, nil
}
