package e2e

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// TestHubPushSurvivesAControlWorkerKilledMidUpload publishes a bake on the
// Hugging Face Hub — an in-process stand-in of the Hub's API served from this
// test on 127.0.0.1, since no Hub is reachable here — and SIGKILLs the
// control worker while a part of the public parquet file is on the wire.
// After a new control worker takes over, the Hub holds exactly one commit
// with the released files byte for byte (the card re-rendered with the
// repository id), the holdout parquet sent before the kill was not sent
// again, and `dataset upload` of the same release makes no new commit. The
// token never reaches a log or a workflow history.
func TestHubPushSurvivesAControlWorkerKilledMidUpload(t *testing.T) {
	srv := hubtest.New(t)
	// The holdout parquet (1 MLP, ~15 KB) goes in one PUT, the public one
	// (8 MLPs, ~40 KB) in 16 KiB parts; the second part hangs until its
	// sender dies.
	srv.ChunkSize = 16 << 10
	token := "hf_e2e_" + randomHex(16)
	srv.AddToken(token, "alice", "write")
	stalled := srv.StallPart(2)
	hfEnv := []string{"HF_TOKEN=" + token}

	s := newStack(t)
	s.startWorker("gpu")
	control := s.startWorkerEnv("control", hfEnv)
	b := bakeSpec{
		ID:          "hub",
		Width:       16,
		Depth:       3,
		NSamples:    20_000,
		SliceSize:   4,
		MaxInFlight: 2,
		Tag:         "hub",
		Splits:      []splitSpec{{"public", "default", 8, 41}, {"holdout", "holdout", 1, 42}},
	}
	cfgMap := s.bakeConfigMap(b)
	cfgMap["release"].(map[string]any)["hub"] = map[string]any{
		"repo":     "alice/e2e",
		"tag":      "v1",
		"endpoint": srv.URL,
	}
	fast := maps.Clone(policy)
	fast["filesystem-heartbeat"] = "2s" // the killed worker's push is noticed within seconds
	cfgMap["policy"] = fast
	cfg := s.writeConfig("bake-hub", cfgMap)
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)

	select {
	case <-stalled:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the Hub push never reached part 2 of a multipart upload; "+
			"control worker log:\n%s", control.output())
	}
	if n := srv.Count("basic"); n != 1 {
		t.Fatalf("%d single-PUT uploads before the kill, want 1 (the holdout parquet): "+
			"the test's file sizes no longer fit its chunk size", n)
	}
	control.kill()
	if n := len(srv.History("alice/e2e", "main")); n != 1 {
		t.Fatalf("%d commits after the kill, want only the repository's initial one", n)
	}

	s.startWorkerEnv("control", hfEnv)
	out := s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID, "--wait")
	history := srv.History("alice/e2e", "main")
	if len(history) != 2 || srv.Tags("alice/e2e")["v1"] != history[0].SHA {
		t.Fatalf("Hub history %d commits, tags %v: want one push commit, tagged v1",
			len(history), srv.Tags("alice/e2e"))
	}
	if !strings.Contains(out.stdout, history[0].SHA) {
		t.Errorf("`bake --wait` does not report the Hub commit:\n%s", out.stdout)
	}
	// After the restart only the files after the stalled one are sent, of
	// which one goes in a single PUT: the holdout split's prepared Arrow
	// file (~5 KB; the public split's, ~40 KB, goes in parts).
	if n := srv.Count("basic"); n != 2 {
		t.Errorf("%d single-PUT uploads in all, want 2 (the holdout parquet before the kill, "+
			"prepared/holdout's Arrow file after): "+
			"the holdout parquet was sent again after the restart", n)
	}

	release := s.download(b)
	onHub, err := srv.Files("alice/e2e", "v1")
	if err != nil {
		t.Fatal(err)
	}
	var released int
	err = filepath.WalkDir(release, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		released++
		rel, _ := filepath.Rel(release, p)
		rel = filepath.ToSlash(rel)
		data, _ := os.ReadFile(p)
		switch {
		case rel == "README.md":
			card := string(onHub[rel])
			if !strings.Contains(card, "alice/e2e") || strings.Contains(card, "<your-repo>") {
				t.Errorf("the card on the Hub is not rendered for alice/e2e:\n%s", card)
			} else if !strings.Contains(card, "## Report") ||
				!strings.Contains(string(data), "## Report") {
				t.Errorf("the card lost the report's section on the way to the Hub:\n%s", card)
			}
		case !bytes.Equal(onHub[rel], data):
			t.Errorf("%s on the Hub differs from the release (%d vs %d bytes)",
				rel, len(onHub[rel]), len(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(onHub) != released+1 { // + the repository's .gitattributes
		t.Errorf("the Hub holds %d files, the release %d", len(onHub), released)
	}

	again := s.whestbake(hfEnv, "dataset", "upload", release, "--repo", "alice/e2e", "--tag", "v1",
		"--endpoint", srv.URL)
	if again.code != 0 ||
		!strings.Contains(again.stdout, "no new commit") ||
		len(srv.History("alice/e2e", "main")) != 2 {
		t.Errorf("re-push of the same dataset made a commit or failed:\n%s", again)
	}

	var leaks []string
	for _, f := range s.exportHistories(filepath.Join(s.dir, "histories")) {
		if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(token)) {
			leaks = append(leaks, "history "+filepath.Base(f))
		}
	}
	logs, _ := filepath.Glob(filepath.Join(s.dir, "logs", "*.log"))
	for _, f := range logs {
		if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(token)) {
			leaks = append(leaks, "log "+filepath.Base(f))
		}
	}
	if len(leaks) > 0 {
		t.Errorf("the Hub token appears in %v", leaks)
	}
}
