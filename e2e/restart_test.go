package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/datasettest"

	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestServerRestartsMidBake stops and restarts each server while a bake is
// half done. The Temporal dev server keeps its state in its database file,
// MinIO on disk; workers and the starter reconnect, and the output is the
// same as a local bake.
func TestServerRestartsMidBake(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	s.startWorker("gpu")
	for i, c := range []devstack.Component{devstack.Temporal, devstack.MinIO} {
		t.Run(string(c), func(t *testing.T) {
			s := s.sub(t)
			// About half a second per MLP, so the restart lands while slices run.
			b := smallBake("restart-"+string(c), uint64(200+10*i))
			b.Width = 32
			b.Depth = 3
			b.NSamples = 2_000_000
			cfg := s.bakeConfig(b)
			s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
			// A starter that follows the bake across the restart.
			follower := s.spawn("follow-"+b.ID, nil, filepath.Join(binDir, "whestbake"),
				"bake", "--config-file", cfg, "--id", b.ID, "--wait")
			bk := keys.Bake(b.ID)
			waitFor(t, time.Minute, "the first slice of public to commit", func() bool {
				ok, err := s.art.Exists(context.Background(), keys.Manifest(bk.Slice("public", 0)))
				return err == nil && ok
			})
			if ok, _ := s.art.Exists(context.Background(), keys.Manifest(bk.Dataset())); ok {
				t.Fatal("the bake finished before the restart: make its MLPs slower")
			}
			if err := devstack.Restart(context.Background(), s.opts, c); err != nil {
				t.Fatalf("restarting %s: %v", c, err)
			}
			select {
			case <-follower.done:
				if code := follower.cmd.ProcessState.ExitCode(); code != 0 {
					t.Errorf("`whestbake bake --wait` did not survive the %s restart "+
						"(exit %d):\n%s", c, code, follower.output())
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("`whestbake bake --wait` still following after 2 minutes:\n%s",
					follower.output())
			}
			s.watch(cfg, b.ID)
			datasettest.SameDataset(t, s.download(b), s.localBake(b))
		})
	}
}
