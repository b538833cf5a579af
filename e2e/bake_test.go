package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
)

// splitSpec is one split of a test bake, with seeds derived from Seed.
type splitSpec struct {
	Name, Config string
	NMLPs        int
	Seed         uint64
}

// bakeSpec is a test bake; it becomes a config file for `whestbake bake`.
type bakeSpec struct {
	ID                     string
	Width, Depth           int
	NSamples               int64
	SliceSize, MaxInFlight int // MaxInFlight 0: auto
	Splits                 []splitSpec
	Tag                    string // release datasets/e2e/<Tag>
}

// smallBake is two splits of several slices each, a few milliseconds per MLP.
func smallBake(id string, seed uint64) bakeSpec {
	return bakeSpec{
		ID:          id,
		Width:       16,
		Depth:       3,
		NSamples:    20_000,
		SliceSize:   2,
		MaxInFlight: 2,
		Tag:         id,
		Splits: []splitSpec{
			{"public", "default", 5, seed},
			{"holdout", "holdout", 3, seed + 1},
		},
	}
}

func (b bakeSpec) slices(n int) int { return (n + b.SliceSize - 1) / b.SliceSize }

// policy keeps retries and failure detection in seconds: a lost GPU worker is
// noticed after 2 s without heartbeats, and retries wait 1 s.
var policy = map[string]any{
	"seeds-timeout": "30s", "slice-timeout": "2m", "slice-heartbeat": "2s", "slice-max-attempts": 5,
	"merge-timeout": "1m", "push-timeout": "1m", "retry-initial": "1s", "retry-max": "2s",
	"other-max-attempts": 5, "filesystem-heartbeat": "10s",
}

// bakeConfig writes the config file of bake b (credentials stay in the environment).
func (s *stack) bakeConfig(b bakeSpec) string {
	s.t.Helper()
	return s.writeConfig("bake-"+b.ID, s.bakeConfigMap(b))
}

// bakeConfigMap is bake b's config as a YAML tree, for tests that spoil it.
func (s *stack) bakeConfigMap(b bakeSpec) map[string]any {
	cfg := s.baseConfig()
	var splits []map[string]any
	for _, sp := range b.Splits {
		splits = append(splits, map[string]any{
			"name":   sp.Name,
			"config": sp.Config,
			"n-mlps": sp.NMLPs,
			"seed":   sp.Seed,
		})
	}
	bake := map[string]any{
		"id":         b.ID,
		"width":      b.Width,
		"depth":      b.Depth,
		"n-samples":  b.NSamples,
		"sampler":    "philox",
		"slice-size": b.SliceSize,
		"splits":     splits,
	}
	if b.MaxInFlight > 0 { // else the default, auto
		bake["max-in-flight"] = b.MaxInFlight
	}
	cfg["bake"] = bake
	cfg["release"] = map[string]any{
		"bucket": releaseBucket,
		"prefix": releasePrefix,
		"name":   "e2e",
		"tag":    b.Tag,
	}
	cfg["policy"] = policy
	return cfg
}

// bake runs `whestbake bake --wait` to completion.
func (s *stack) bake(b bakeSpec) result {
	s.t.Helper()
	return s.mustWhestbake("bake", "--config-file", s.bakeConfig(b), "--id", b.ID, "--wait")
}

// watch follows bake id with `whestbake watch` until it ends, which must be
// a success. Unlike `bake --wait` it accepts a bake that already completed.
func (s *stack) watch(cfg, id string) result {
	s.t.Helper()
	return s.mustWhestbake("watch", id, "--config-file", cfg, "--interval", "200ms")
}

// releaseURI is where bake b's release is published.
func releaseURI(b bakeSpec) string {
	return "s3://" + releaseBucket + "/" + keys.Release(releasePrefix, "e2e", b.Tag)
}

// download fetches b's release with `whestbake dataset download` (which
// checks every sha256) and validates it as whestbench's loader would.
func (s *stack) download(b bakeSpec) string {
	s.t.Helper()
	dir := filepath.Join(s.dir, "release-"+b.ID)
	cfg := s.writeConfig("download", s.baseConfig())
	s.mustWhestbake("dataset", "download", releaseURI(b), "--config-file", cfg, "--output", dir)
	d, err := dataset.ReadDir(dir, false)
	if err != nil {
		s.t.Fatalf("release of %s does not validate: %v", b.ID, err)
	}
	for i, sp := range b.Splits {
		if d.Splits[i].Name != sp.Name || len(d.Splits[i].Rows) != sp.NMLPs {
			s.t.Errorf("release of %s: split %d is %s with %d rows, want %s with %d",
				b.ID, i, d.Splits[i].Name, len(d.Splits[i].Rows), sp.Name, sp.NMLPs)
		}
	}
	return dir
}

// localBake bakes b's seeds on this machine with the local verbs, slice by
// slice as the workflow cuts them: `dataset generate-seeds`, `dataset bake
// --slice k/N`, `dataset merge`, `dataset combine-splits`. No Temporal, no
// store: the independent reference for every bake here.
func (s *stack) localBake(b bakeSpec) string {
	s.t.Helper()
	dir := filepath.Join(s.dir, "local-"+b.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	itoa := strconv.Itoa
	var splits []string
	for _, sp := range b.Splits {
		seeds := filepath.Join(dir, sp.Name+"-seeds.json")
		s.mustWhestbake("dataset", "generate-seeds", "--n-mlps", itoa(sp.NMLPs),
			"--seed", strconv.FormatUint(sp.Seed, 10), "--output", seeds)
		count := b.slices(sp.NMLPs)
		var parts []string
		for k := range count {
			part := filepath.Join(dir, fmt.Sprintf("%s-slice%d", sp.Name, k))
			args := []string{"dataset", "bake",
				"--n-mlps", itoa(sp.NMLPs),
				"--width", itoa(b.Width),
				"--depth", itoa(b.Depth),
				"--n-samples", strconv.FormatInt(b.NSamples, 10),
				"--mlp-seeds", seeds,
				"--split", sp.Name,
				"--config", sp.Config,
				"--slice", fmt.Sprintf("%d/%d", k, count),
				"--device", "cpu",
				"--threads", "2",
				"--output", part,
			}
			s.mustWhestbake(args...)
			parts = append(parts, part)
		}
		merged := parts[0] // one slice covering the split is already complete
		if count > 1 {
			merged = filepath.Join(dir, sp.Name)
			mergeArgs := append([]string{"dataset", "merge"}, parts...)
			s.mustWhestbake(append(mergeArgs, "--output", merged)...)
		}
		splits = append(splits, merged)
	}
	final := filepath.Join(dir, "dataset")
	combineArgs := append([]string{"dataset", "combine-splits"}, splits...)
	s.mustWhestbake(append(combineArgs, "--output", final)...)
	return final
}

// waitFor polls cond every 50 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
