package e2e

import (
	"context"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestGCAndAStartExcludeEachOther: `whestbake gc ID` and `whestbake bake`
// of the same ID never run beside each other, whichever comes first, while
// every S3 request of the one that came first takes a second (issue 27,
// item 5: a restart during a slow gc had its inputs deleted under it):
//   - a restart while gc deletes is refused, naming the gc, and the bake
//     restarted after gc is equal to a local bake;
//   - gc while a restart stores its inputs is refused, naming the
//     restart, and deletes nothing;
//   - a gc killed mid-deletion keeps the bake locked (the restart is
//     refused, saying by whom and until when) until the lock ends; the gc
//     deleted the commit markers first, so the restart then completes,
//     equal to a local bake.
func TestGCAndAStartExcludeEachOther(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	ctx := context.Background()
	statusCfg := s.writeConfig("status", s.baseConfig())
	// Every S3 request through the proxy waits a second, as in the issue.
	proxy := devtest.StartFaultProxy(t, s.opts.S3Config().Endpoint)
	slowCfg := s.baseConfig()
	section(slowCfg, "s3")["endpoint"] = proxy.Addr
	slowGC := s.writeConfig("gc-slow-s3", slowCfg)
	// lists reports each listing of the bake's folder, a deletion's first step.
	lists := func(id string) <-chan struct{} {
		seen := make(chan struct{}, 16)
		proxy.SetFault(func(r *http.Request) devtest.Fault {
			if r.Method == http.MethodGet && r.URL.Query().Get("prefix") == keys.Bake(id).Prefix() {
				seen <- struct{}{}
			}
			return devtest.Fault{Delay: time.Second}
		})
		return seen
	}
	// A few hundred milliseconds per MLP: cancelled after the first.
	slowBake := func(id string, seed uint64) bakeSpec {
		return bakeSpec{
			ID:          id,
			Width:       32,
			Depth:       3,
			NSamples:    1_500_000,
			SliceSize:   1,
			MaxInFlight: 1,
			Tag:         id,
			Splits:      []splitSpec{{"public", "default", 6, seed}},
		}
	}
	cancelled := func(b bakeSpec, cfg string) {
		t.Helper()
		s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
		waitFor(t, time.Minute, "the first MLP of "+b.ID, func() bool {
			return s.exists(t, keys.Bake(b.ID).MLPResult("public", 0))
		})
		s.cancelAndWaitClosed(t, statusCfg, b.ID, "public")
	}

	t.Run("a restart while gc deletes", func(t *testing.T) {
		s := s.sub(t)
		b := slowBake("gc-race", 700)
		cfg := s.bakeConfig(b)
		cancelled(b, cfg)
		listed := lists(b.ID)
		gc := make(chan result, 1)
		go func() { gc <- s.whestbake(nil, "gc", b.ID, "--config-file", slowGC) }()
		select {
		case <-listed:
		case <-time.After(time.Minute):
			t.Fatal("gc did not list the bake's objects within a minute")
		}
		r := s.whestbake(nil, "bake", "--config-file", cfg, "--id", b.ID)
		if g := <-gc; g.code != 0 || strings.Contains(g.stderr, "warning") {
			t.Fatalf("gc beside a restart: %s", g)
		}
		if !r.refused("bake gc-race is being garbage-collected: `whestbake gc` on ",
			"nothing was started") {
			t.Fatalf("a restart while gc deletes: want a refusal naming the gc:\n%s", r)
		}
		left, err := s.art.List(ctx, keys.Bake(b.ID).Prefix())
		if err != nil || len(left) != 2 {
			t.Fatalf("after gc: %v (%v), want the record and where the bake was started", left, err)
		}
		s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")
		datasettest.SameDataset(t, s.download(b), s.localBake(b))
	})

	b := slowBake("gc-race-2", 800)
	t.Run("gc while a restart stores its inputs", func(t *testing.T) {
		s := s.sub(t)
		cancelled(b, s.bakeConfig(b))
		slowStart := s.bakeConfigMap(b)
		section(slowStart, "s3")["endpoint"] = proxy.Addr
		proxy.SetFault(func(*http.Request) devtest.Fault {
			return devtest.Fault{Delay: time.Second}
		})
		slowStartCfg := s.writeConfig("bake-slow-start", slowStart)
		started := make(chan result, 1)
		go func() {
			started <- s.whestbake(nil, "bake", "--config-file", slowStartCfg, "--id", b.ID)
		}()
		waitFor(t, time.Minute, "the restart to take the bake's lock", func() bool {
			d, err := s.tc.DescribeWorkflowExecution(ctx, "bake/"+b.ID+"/lock", "")
			return err == nil &&
				d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
		})
		r := s.whestbake(nil, "gc", b.ID, "--config-file", statusCfg)
		if !r.refused("bake gc-race-2 is being started: `whestbake bake` on ",
			"nothing was deleted") {
			t.Errorf("gc while a restart stores its inputs: "+
				"want a refusal naming the restart:\n%s", r)
		}
		if st := <-started; st.code != 0 || !strings.Contains(st.stdout, "Restarted") {
			t.Fatalf("the restart beside gc: %s", st)
		}
		waitFor(t, time.Minute, "the first MLP of "+b.ID, func() bool {
			return s.exists(t, keys.Bake(b.ID).MLPResult("public", 0))
		})
		s.cancelAndWaitClosed(t, statusCfg, b.ID, "public")
	})

	t.Run("a gc killed mid-deletion", func(t *testing.T) {
		s := s.sub(t)
		cfg := s.bakeConfig(b)
		listed := lists(b.ID)
		gc := s.spawn("gc-killed", nil, filepath.Join(binDir, "whestbake"),
			"gc", b.ID, "--config-file", slowGC)
		for range 2 { // the markers' listing, then the rest's
			select {
			case <-listed:
			case <-time.After(time.Minute):
				t.Fatalf("gc did not list the bake twice within a minute:\n%s", gc.output())
			}
		}
		gc.kill()
		left, err := s.art.List(ctx, keys.Bake(b.ID).Prefix())
		if err != nil {
			t.Fatal(err)
		}
		var results int
		for _, k := range left {
			if keys.Marker(k) {
				t.Errorf("%s outlived the gc that deleted the commit markers first", k)
			}
			if path.Dir(k) == path.Dir(keys.Bake(b.ID).MLPResult("public", 0)) {
				results++
			}
		}
		if results == 0 {
			t.Fatalf("the killed gc deleted the results too: %v", left)
		}
		r := s.whestbake(nil, "bake", "--config-file", cfg, "--id", b.ID)
		for _, want := range []string{
			"bake gc-race-2 is being garbage-collected: `whestbake gc` on ",
			"the lock ends by itself at ",
			"temporal workflow terminate --workflow-id bake/gc-race-2/lock",
		} {
			if !r.refused(want) {
				t.Fatalf("a restart after gc was killed: want a refusal that says %q:\n%s", want, r)
			}
		}
		d, err := s.tc.DescribeWorkflowExecution(ctx, "bake/gc-race-2/lock", "")
		timeout := d.GetExecutionConfig().GetWorkflowExecutionTimeout()
		if err != nil || timeout.AsDuration() != 10*time.Minute {
			t.Fatalf("the dead gc's lock: %v (%v), want one that ends by itself after 10 minutes",
				d.GetExecutionConfig(), err)
		}
		// What the refusal says to do once the gc is known to be gone.
		err = s.tc.TerminateWorkflow(ctx, "bake/gc-race-2/lock", "", "the gc was killed")
		if err != nil {
			t.Fatal(err)
		}
		s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")
		datasettest.SameDataset(t, s.download(b), s.localBake(b))
	})
}
