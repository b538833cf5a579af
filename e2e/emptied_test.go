package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestRestartAfterTheBucketWasEmptied: MinIO stopped mid-bake and its data
// emptied (a restore from nothing, a bucket wiped by hand). The bake fails
// loudly, saying that what it had committed is gone and that a restart
// stores it again; and the restart that advice names completes, equal to a
// local bake. It used to fail the same way as the bake.
func TestRestartAfterTheBucketWasEmptied(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	ctx := context.Background()
	// About half a second per MLP, one slice at a time.
	b := bakeSpec{
		ID:          "emptied",
		Width:       32,
		Depth:       3,
		NSamples:    2_000_000,
		SliceSize:   1,
		MaxInFlight: 1,
		Tag:         "emptied",
		Splits:      []splitSpec{{"public", "default", 6, 61}, {"holdout", "holdout", 2, 62}},
	}
	// The holdout split's seeds are drawn from OS entropy, as when a
	// config gives none: a restart after the bucket was emptied draws them
	// again.
	c := s.bakeConfigMap(b)
	delete(firstSplitNamed(c, "holdout"), "seed")
	cfg := s.writeConfig("bake-"+b.ID, c)
	bk := keys.Bake(b.ID)
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
	waitFor(t, time.Minute, "the first slice to commit", func() bool {
		return s.exists(t, keys.Manifest(bk.Slice("public", 1)))
	})
	if err := devstack.Stop(s.opts, devstack.MinIO); err != nil {
		t.Fatal(err)
	}
	// Every object of both buckets gone, the buckets kept (a bucket gone
	// fails the bake on its own, saying to create it): on MinIO's drive an
	// object is a folder in its bucket's folder.
	for _, bucket := range []string{artifactBucket, releaseBucket} {
		dir := filepath.Join(s.opts.Dir, "minio", bucket)
		objects, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objects {
			if err := os.RemoveAll(filepath.Join(dir, o.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := devstack.StartMinIO(ctx, s.opts); err != nil {
		t.Fatal(err)
	}
	r := s.whestbake(nil, "watch", b.ID, "--config-file", cfg, "--interval", "200ms")
	if !r.failed("something outside whestbake deleted it", "whestbake bake --id "+b.ID) {
		t.Fatalf("the bake whose bucket was emptied: want a failure that says so "+
			"and how to restart it:\n%s", r)
	}
	r = s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")
	if !strings.Contains(r.stdout, "Restarted") {
		t.Errorf("the restart after the bucket was emptied:\n%s", r)
	}
	// The dataset holds what its own seeds give: every MLP recomputed.
	s.mustWhestbake("dataset", "verify", s.download(b), "--k", "8", "--threads", "2")
}

// firstSplitNamed is the split of cfg's bake named name.
func firstSplitNamed(cfg map[string]any, name string) map[string]any {
	for _, sp := range section(cfg, "bake")["splits"].([]map[string]any) {
		if sp["name"] == name {
			return sp
		}
	}
	return nil
}
