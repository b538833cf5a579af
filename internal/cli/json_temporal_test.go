package cli

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
)

// statusVaries are the status/v1 fields that differ from one bake to the
// next of the same config: its run, its times, and the digest of a
// manifest that lists timestamped files.
var statusVaries = []string{
	"run_id", "started_at", "ended_at", "at", "last_heartbeat", "manifest_sha256",
}

// The Temporal verbs' --json against a real Temporal dev server and MinIO,
// with an in-process worker: status, list, watch and gc of a completed
// bake; watch while it is cancelled, cancel, status and gc of a cancelled
// one; status and watch of a terminated one, which exit 1 as without
// --json. Skipped under -short.
func TestTemporalVerbsJSONOnDevStack(t *testing.T) {
	o := startDevStack(t, devstack.ArtifactsBucket)
	dir := t.TempDir()
	cfgFile := writeFile(t, filepath.Join(dir, "c.yaml"), starterConfigYAML+workerConfigYAML)
	startWorker(t, cfgFile, io.Discard)
	// jsonOf runs a verb with --json and the config file, which must
	// exit 0, and decodes its output.
	jsonOf := func(t *testing.T, file string, args ...string) (map[string]any, string) {
		t.Helper()
		out := mustRun(t, append(args, "--config-file", file, "--json")...)
		return decodeStrict(t, out).(map[string]any), out
	}

	t.Run("completed", func(t *testing.T) {
		mustRun(t, "bake", "--config-file", cfgFile, "--id", "j1", "--wait")
		_, out := jsonOf(t, cfgFile, "status", "j1")
		checkGolden(t, "status-completed", out, statusVaries...)
		_, out = jsonOf(t, cfgFile, "list")
		checkGolden(t, "list", out, "started_at", "ended_at")
		// An ended bake: watch prints one status and exits as status does.
		_, out = jsonOf(t, cfgFile, "watch", "j1")
		if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 1 {
			t.Errorf("watch --json of an ended bake printed %d lines, want 1:\n%s", len(lines), out)
		}
		checkGolden(t, "status-completed", out, statusVaries...)
		gc, out := jsonOf(t, cfgFile, "gc", "j1")
		checkGolden(t, "gc-completed", out, "bytes", "/deleted/objects")
		if kept := gc["kept"].(map[string]any)["objects"].(json.Number); kept.String() == "0" {
			t.Errorf("gc of a completed bake kept nothing:\n%s", out)
		}
	})

	slow := writeFile(t, filepath.Join(dir, "slow.yaml"), slowConfigYAML)
	t.Run("cancelled", func(t *testing.T) {
		mustRun(t, "bake", "--config-file", slow, "--id", "j2")
		// Followed by its JSON until a slice has finished: watch --json
		// goes on while the bake runs, so status is asked instead.
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			st, out := jsonOf(t, slow, "status", "j2")
			split := st["splits"].([]any)[0].(map[string]any)
			if split["mlps_done"].(json.Number).String() != "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no MLP finished in 2 minutes:\n%s", out)
			}
		}
		// Watched while it runs and is cancelled: one status a line, one
		// per refresh, from running to canceled.
		watched := make(chan []string, 1)
		go func() {
			code, out, errs := run(t, "watch", "j2", "--config-file", slow,
				"--json", "--interval", "100ms")
			if code != 0 {
				t.Errorf("watch --json: exit %d\n%s", code, errs)
			}
			watched <- strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		}()
		time.Sleep(300 * time.Millisecond) // a few refreshes of the running bake
		code, out, errs := run(t, "cancel", "j2", "--config-file", slow, "--json")
		if code != 0 || !strings.Contains(errs, "Cancellation of bake j2 requested") {
			t.Fatalf("cancel --json: exit %d\n%s%s", code, out, errs)
		}
		checkGolden(t, "cancel", out, "run_id")
		lines := <-watched
		first := decodeStrict(t, lines[0]).(map[string]any)
		last := decodeStrict(t, lines[len(lines)-1]).(map[string]any)
		if len(lines) < 2 || first["state"] != "running" || last["state"] != "canceled" {
			t.Errorf("watch --json of a bake cancelled while watched: %d lines, from %v to %v; "+
				"want one a refresh, from running to canceled",
				len(lines), first["state"], last["state"])
		}
		for _, l := range lines {
			if st := decodeStrict(t, l).(map[string]any); st["schema"] != "whestbake.status/v1" {
				t.Errorf("watch --json line of schema %v: %s", st["schema"], l)
			}
		}

		st, out := jsonOf(t, slow, "status", "j2")
		split := st["splits"].([]any)[0].(map[string]any)
		hist := split["history"].(map[string]any)
		sum := 0
		for _, k := range []string{"computed", "resumed", "reused"} {
			n, _ := hist[k].(json.Number).Int64()
			sum += int(n)
		}
		failure, _ := st["failure"].(map[string]any)
		if st["state"] != "canceled" ||
			split["stage"] != "canceled" ||
			failure["message"] != "canceled" ||
			split["mlps_done"].(json.Number).String() != strconv.Itoa(sum) {
			t.Errorf("status --json of a cancelled bake: want state, stage and failure canceled, "+
				"mlps_done the computed, resumed and reused MLPs:\n%s", out)
		}
		gc, out := jsonOf(t, slow, "gc", "j2")
		deleted, _ := gc["deleted"].(map[string]any)["objects"].(json.Number).Int64()
		if deleted == 0 || gc["completed"] != false || gc["bake_state"] != "canceled" {
			t.Errorf("gc --json of a cancelled bake:\n%s", out)
		}
	})

	t.Run("terminated", func(t *testing.T) {
		// Started where no GPU worker polls, so it is still running when
		// it is terminated.
		t.Setenv("WHESTBAKE_BAKE_GPU_QUEUE", "nobody-polls-this")
		mustRun(t, "bake", "--config-file", slow, "--id", "j3")
		c := devtest.Client(t, o)
		err := c.TerminateWorkflow(context.Background(), bakeapi.BakeWorkflowID("j3"), "", "test")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"status", "watch"} {
			code, out, errs := run(t, v, "j3", "--config-file", slow, "--json")
			if code != 1 || !strings.Contains(errs, "error: bake j3 terminated") {
				t.Errorf("%s --json of a terminated bake: exit %d, want 1 as without --json\n%s",
					v, code, errs)
				continue
			}
			st := decodeStrict(t, out).(map[string]any)
			failure, _ := st["failure"].(map[string]any)
			if st["schema"] != "whestbake.status/v1" || st["state"] != "terminated" ||
				!strings.HasPrefix(failure["message"].(string), "terminated") {
				t.Errorf("%s --json of a terminated bake:\n%s", v, out)
			}
		}
	})
}
