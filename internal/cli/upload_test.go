package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// upload runs against the in-process stand-in of the Hub (no Hub is
// reachable from the tests): it publishes the whole directory with the card
// re-rendered for the repository, and a second run is a no-op.
func TestUploadPublishesTheDatasetOnceWithItsCard(t *testing.T) {
	srv := hubtest.New(t)
	const token = "hf_cli_test_token_5f1e2d"
	srv.AddToken(token, "alice", "write")
	dir := filepath.Join(t.TempDir(), "ds")
	mustRun(t, "dataset", "bake", "--n-mlps", "2", "--width", "6", "--depth", "3", "--n-samples", "3e3", "--seed", "2", "--output", dir)
	// The report is published with the card's section linking it, and
	// whatever else lies in the directory is published too.
	mustRun(t, "dataset", "report", dir)
	writeFile(t, filepath.Join(dir, "notes.txt"), "operator's notes")
	tokenFile := writeFile(t, filepath.Join(t.TempDir(), "token"), token+"\n")
	t.Setenv("HF_TOKEN", "")
	args := []string{"dataset", "upload", dir, "--repo", "alice/gt", "--tag", "v1", "--endpoint", srv.URL, "--token-file", tokenFile}

	out := mustRun(t, args...)
	for _, want := range []string{"Uploading " + dir + " → hf://alice/gt@v1\n", "Total: ", "(10 files) — will create repo if needed.\n",
		"✓ Uploaded hf://alice/gt@v1 in ", "Commit: ", "Visible at: " + srv.URL + "/datasets/alice/gt/tree/v1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	got, err := srv.Files("alice/gt", "v1")
	if err != nil {
		t.Fatal(err)
	}
	parquets, _ := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	if len(parquets) != 1 {
		t.Fatalf("bake wrote %v, want one parquet file", parquets)
	}
	for _, rel := range append([]string{"data/" + filepath.Base(parquets[0]), "metadata.json", "notes.txt"}, dataset.ReportPaths()...) {
		if !bytes.Equal(got[rel], readBytes(t, filepath.Join(dir, filepath.FromSlash(rel)))) {
			t.Errorf("%s on the Hub differs from the directory's", rel)
		}
	}
	card := string(got["README.md"])
	if !strings.Contains(card, "alice/gt") || strings.Contains(card, "<your-repo>") {
		t.Errorf("the published card does not name the repository:\n%s", card)
	}
	if !strings.Contains(card, "## Report") || !strings.Contains(card, "(report/final_means.png)") {
		t.Errorf("the published card lost the report's section:\n%s", card)
	}
	if strings.Contains(string(readBytes(t, filepath.Join(dir, "README.md"))), "alice/gt") {
		t.Error("upload rewrote README.md in the directory")
	}
	if strings.Contains(out, token) {
		t.Error("the output shows the token")
	}

	again := mustRun(t, args...)
	if !strings.Contains(again, "already holds these files: no new commit") || len(srv.History("alice/gt", "main")) != 2 {
		t.Errorf("re-upload of the same directory made a commit:\n%s", again)
	}
}

func TestUploadRefusesBadRequestsWithTheFix(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("hf_good_token_77", "alice", "write")
	dir := t.TempDir()
	ds := filepath.Join(t.TempDir(), "ds")
	mustRun(t, "dataset", "bake", "--n-mlps", "1", "--width", "4", "--depth", "2", "--n-samples", "100", "--output", ds)
	t.Setenv("HF_TOKEN", "")
	cases := []struct {
		name string
		env  string
		args []string
		code int
		want string
	}{
		{"no repo", "hf_good_token_77", []string{dir}, 2, "--repo is required"},
		{"bad repo", "hf_good_token_77", []string{dir, "--repo", "justname"}, 2, "owner/name"},
		{"no token", "", []string{dir, "--repo", "alice/x"}, 1, "set HF_TOKEN"},
		{"rejected token", "hf_bad_token_99", []string{ds, "--repo", "alice/x"}, 1, "401"},
		{"not a dataset", "hf_good_token_77", []string{dir, "--repo", "alice/x"}, 1, "no metadata.json"},
	}
	for _, c := range cases {
		t.Setenv("HF_TOKEN", c.env)
		code, out, errs := run(t, append([]string{"dataset", "upload", "--endpoint", srv.URL}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", c.name, code, errs, c.code, c.want)
		}
		if c.env != "" && (strings.Contains(out, c.env) || strings.Contains(errs, c.env)) {
			t.Errorf("%s: the token was printed", c.name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("a failed upload wrote into the directory")
	}
}
