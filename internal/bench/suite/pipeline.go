package suite

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/whestbake/whestbake/internal/bench/gate"
)

// The local pipeline: two splits of MLPs of W=256 D=8, 2 MiB of weights
// each, which every verb carries, baked as slices, merged per split and
// combined, with few samples, so the figures are about moving datasets
// rather than about the engine.
const (
	pipeWidth, pipeDepth = 256, 8
	pipeSamples          = 2048
	pipeThreads          = 2
)

// pipeSplits are the pipeline's splits: 256 MLPs in 5 slices of 64 or 32.
var pipeSplits = []struct {
	name, config string
	mlps, slices int
	seed         int
}{
	{"public", "default", 192, 3, 1},
	{"holdout", "holdout", 64, 2, 2},
}

const pipeWorkload = "local pipeline 256 MLPs W=256 D=8"

// Metric names of the pipeline.
const (
	sliceRSS   = "slice bake peak RSS"
	mergeRSS   = "merge peak RSS"
	combineRSS = "combine-splits peak RSS"
	dataSize   = "dataset size"
)

func pipelineJob() job {
	m := func(name, unit string, k gate.Kind) gate.Metric {
		return gate.Metric{
			Workload: pipeWorkload,
			Name:     name,
			Unit:     unit,
			Kind:     k,
			Better:   gate.Lower,
		}
	}
	return job{
		metrics: []gate.Metric{
			m(sliceRSS, "MiB", gate.Memory),
			m(mergeRSS, "MiB", gate.Memory),
			m(combineRSS, "MiB", gate.Memory),
			m(dataSize, "MiB", gate.Work),
		},
		run: func(ctx context.Context, o Options, _ func(string, string) bool) (measured, error) {
			out := map[string][]float64{}
			wb, err := o.build(ctx, "whestbake", starterPkg)
			if err != nil {
				return measured{}, err
			}
			for i := range o.Runs {
				dir := filepath.Join(o.Dir, fmt.Sprintf("pipeline-%d", i))
				r, err := runPipeline(ctx, o, wb, dir)
				if err != nil {
					return measured{}, err
				}
				for name, v := range r {
					k := gate.Metric{Workload: pipeWorkload, Name: name}.Key()
					out[k] = append(out[k], v)
				}
			}
			return measured{values: out}, nil
		},
	}
}

// runPipeline runs the verbs in dir and returns the figures of one run:
// the largest peak RSS of each verb over its invocations, and the size of
// the combined dataset. The directory is removed afterwards: the run
// writes about 1.5 GB.
func runPipeline(ctx context.Context, o Options, wb, dir string) (map[string]float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := map[string]float64{}
	verb := func(metric string, args ...string) error {
		c, err := run(ctx, dir, nil, wb, args...)
		if err != nil {
			return err
		}
		if metric != "" {
			out[metric] = max(out[metric], c.peakRSS/mib)
		}
		return nil
	}
	var merged []string
	for _, sp := range pipeSplits {
		seeds := sp.name + "-seeds.json"
		if err := verb("", "dataset", "generate-seeds",
			"--n-mlps", strconv.Itoa(sp.mlps),
			"--seed", strconv.Itoa(sp.seed),
			"--output", seeds,
		); err != nil {
			return nil, err
		}
		var parts []string
		for k := range sp.slices {
			part := fmt.Sprintf("%s-slice-%d", sp.name, k)
			o.logf("  pipeline: bake %s slice %d/%d", sp.name, k, sp.slices)
			if err := verb(sliceRSS, "dataset", "bake",
				"--n-mlps", strconv.Itoa(sp.mlps),
				"--width", strconv.Itoa(pipeWidth),
				"--depth", strconv.Itoa(pipeDepth),
				"--n-samples", strconv.Itoa(pipeSamples),
				"--mlp-seeds", seeds,
				"--slice", fmt.Sprintf("%d/%d", k, sp.slices),
				"--split", sp.name,
				"--config", sp.config,
				"--device", "cpu",
				"--threads", strconv.Itoa(pipeThreads),
				"--output", part,
			); err != nil {
				return nil, err
			}
			parts = append(parts, part)
		}
		o.logf("  pipeline: merge %s", sp.name)
		mergeArgs := append(append([]string{"dataset", "merge"}, parts...), "--output", sp.name)
		if err := verb(mergeRSS, mergeArgs...); err != nil {
			return nil, err
		}
		merged = append(merged, sp.name)
	}
	o.logf("  pipeline: combine-splits")
	combineArgs := append(append([]string{"dataset", "combine-splits"}, merged...),
		"--output", "combined")
	if err := verb(combineRSS, combineArgs...); err != nil {
		return nil, err
	}
	size, err := dirSize(filepath.Join(dir, "combined"))
	out[dataSize] = float64(size) / mib
	return out, err
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}
