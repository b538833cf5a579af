package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
)

// TestSecretNeverLeaks drives every path that handles the S3 credentials — a
// bake, a failed bake, a cancelled bake, status/list/download, a starter and a
// worker with a wrong secret — then exports every workflow history, gathers
// every process log and reads every stored object, and finds the secret in
// none of them.
func TestSecretNeverLeaks(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	statusCfg := s.writeConfig("status", s.baseConfig())

	good := smallBake("leak-ok", 900)
	s.bake(good)
	s.download(good)
	s.mustWhestbake("status", good.ID, "--config-file", statusCfg)
	l := s.mustWhestbake("list", "--config-file", statusCfg)
	if !strings.Contains(l.stdout, good.ID) {
		t.Errorf("`whestbake list` does not show bake %s:\n%s", good.ID, l)
	}

	conflict := smallBake("leak-conflict", 910)
	conflict.Tag = good.Tag
	r := s.whestbake(nil, "bake", "--config-file", s.bakeConfig(conflict),
		"--id", conflict.ID, "--wait")
	if r.code == 0 {
		t.Fatalf("a second release at tag %s was accepted:\n%s", good.Tag, r)
	}

	slow := bakeSpec{
		ID:          "leak-cancel",
		Width:       64,
		Depth:       4,
		NSamples:    5_000_000,
		SliceSize:   1,
		MaxInFlight: 1,
		Tag:         "leak-cancel",
		Splits:      []splitSpec{{"public", "default", 2, 920}},
	}
	s.mustWhestbake("bake", "--config-file", s.bakeConfig(slow), "--id", slow.ID)
	waitFor(t, time.Minute, "the slow bake's first checkpoint", func() bool {
		ok, err := s.art.Exists(context.Background(), keys.Bake(slow.ID).MLPCheckpoint("public", 0))
		return err == nil && ok
	})
	s.mustWhestbake("cancel", slow.ID, "--config-file", statusCfg)
	waitFor(t, 30*time.Second, "the cancelled bake to close", func() bool {
		d, err := s.tc.DescribeWorkflowExecution(context.Background(),
			bakeapi.BakeWorkflowID(slow.ID), "")
		return err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil
	})
	// Cancelling is what was asked for: status says so and exits 0.
	st := s.whestbake(nil, "status", slow.ID, "--config-file", statusCfg)
	if st.code != 0 || !strings.Contains(strings.ToLower(st.stdout), "cancel") {
		t.Errorf("status of a cancelled bake should say so and exit 0:\n%s", st)
	}

	wrong := []string{"WHESTBAKE_S3_SECRET_KEY=" + s.secret + "-but-wrong"}
	r = s.whestbake(wrong, "bake", "--config-file", s.bakeConfig(smallBake("leak-wrong", 930)),
		"--wait")
	if r.code == 0 {
		t.Errorf("a bake with a wrong secret was accepted:\n%s", r)
	}
	r = s.whestbake(wrong, "dataset", "download", releaseURI(good), "--config-file", statusCfg,
		"--output", filepath.Join(s.dir, "nope"))
	if r.code == 0 {
		t.Errorf("a download with a wrong secret succeeded:\n%s", r)
	}
	workerCfg := s.writeConfig("worker", s.baseConfig())
	bad := s.spawn("worker-wrong-secret", wrong, filepath.Join(binDir, "whestbake-worker"),
		"--role", "all", "--config-file", workerCfg, "--device", "cpu")
	select {
	case <-bad.done:
	case <-time.After(30 * time.Second):
		t.Error("a worker with a wrong S3 secret kept running")
	}

	var leaks []string
	check := func(where string, data []byte) {
		if bytes.Contains(data, []byte(s.secret)) {
			leaks = append(leaks, where)
		}
	}
	histories := s.exportHistories(filepath.Join(s.dir, "histories"))
	// leak-ok's bake and two splits, leak-cancel's bake and split; the
	// conflicting bake is refused by the starter before it starts anything.
	if len(histories) < 5 {
		t.Errorf("exported %d histories, want every bake and split workflow (at least 5)",
			len(histories))
	}
	for _, f := range histories {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check("history "+filepath.Base(f), data)
	}
	logs, _ := filepath.Glob(filepath.Join(s.dir, "logs", "*.log"))
	for _, f := range logs {
		data, _ := os.ReadFile(f)
		check("log "+filepath.Base(f), data)
	}
	ctx := context.Background()
	for _, st := range []struct {
		name   string
		bucket *store.Store
	}{{"artifacts", s.art}, {"releases", s.rel}} {
		objs, err := st.bucket.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range objs {
			data, err := st.bucket.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			check(st.name+" object "+k, data)
		}
	}
	if len(leaks) > 0 {
		t.Errorf("the S3 secret appears in: %s", strings.Join(leaks, ", "))
	}
	if len(logs) < 4 {
		t.Errorf("only %d logs gathered (%v): the check would miss the workers", len(logs), logs)
	}
}
