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
// reachable from the tests): it publishes the dataset's own files with the
// card re-rendered for the repository — never a token file kept beside
// them, hidden files, staging folders or notes — and a second run is a
// no-op.
func TestUploadPublishesTheDatasetOnceWithItsCard(t *testing.T) {
	srv := hubtest.New(t)
	const token = "hf_cli_test_token_5f1e2d"
	srv.AddToken(token, "alice", "write")
	dir := filepath.Join(t.TempDir(), "ds")
	mustRun(t, "dataset", "bake", "--n-mlps", "2", "--width", "6", "--depth", "3",
		"--n-samples", "3e3", "--seed", "2", "--output", dir)
	// The report is published with the card's section linking it;
	// nothing else that lies in the directory is.
	mustRun(t, "dataset", "report", dir)
	// (A file under prepared/ is refused, not left out: whestbench's
	// loader would read it; see TestHostilePreparedTreeIsRefused.)
	foreign := []string{
		".hf_token",
		".DS_Store",
		"notes.txt",
		".report.tmp-123/final_means.png",
		"data/.public-00000-of-00001.parquet.tmp-9",
		"report/draft.png",
	}
	for _, rel := range foreign[1:] {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, "not the dataset's")
	}
	tokenFile := writeFile(t, filepath.Join(dir, ".hf_token"), token+"\n")
	t.Setenv("HF_TOKEN", "")
	args := []string{"dataset", "upload", dir, "--repo", "alice/gt", "--tag", "v1",
		"--endpoint", srv.URL, "--token-file", tokenFile}

	// report/draft.png is in no dataset's layout: dataset report refuses
	// to replace such a folder, and upload leaves the file out.
	out := mustRun(t, args...)
	for _, want := range []string{
		"Uploading " + dir + " → hf://alice/gt@v1\n",
		"Left out 6 file(s) that are not part of the dataset: ",
		"Total: ",
		"(9 files) — will create repo if needed.\n",
		"✓ Uploaded hf://alice/gt@v1 in ",
		"Commit: ",
		"Visible at: " + srv.URL + "/datasets/alice/gt/tree/v1\n",
	} {
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
	published := []string{"data/" + filepath.Base(parquets[0]), "metadata.json"}
	for _, rel := range append(published, dataset.ReportPaths()...) {
		if !bytes.Equal(got[rel], readBytes(t, filepath.Join(dir, filepath.FromSlash(rel)))) {
			t.Errorf("%s on the Hub differs from the directory's", rel)
		}
	}
	for _, rel := range foreign {
		if _, ok := got[rel]; ok {
			t.Errorf("%s, not a file of the dataset, was published", rel)
		}
		if !strings.Contains(out, rel) {
			t.Errorf("the output does not say that %s was left out:\n%s", rel, out)
		}
	}
	if len(got) != 10 { // the 9 files and the repository's .gitattributes
		t.Errorf("the Hub holds %d files, want 10", len(got))
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
	if !strings.Contains(again, "already holds these files: no new commit") ||
		len(srv.History("alice/gt", "main")) != 2 {
		t.Errorf("re-upload of the same directory made a commit:\n%s", again)
	}
}

func TestUploadRefusesBadRequestsWithTheFix(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("hf_good_token_77", "alice", "write")
	dir := t.TempDir()
	ds := filepath.Join(t.TempDir(), "ds")
	mustRun(t, "dataset", "bake", "--n-mlps", "1", "--width", "4", "--depth", "2",
		"--n-samples", "100", "--output", ds)
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
		{"no token", "", []string{ds, "--repo", "alice/x"}, 1, "set HF_TOKEN"},
		{"rejected token", "hf_bad_token_99", []string{ds, "--repo", "alice/x"}, 1, "401"},
		{"not a dataset", "hf_good_token_77", []string{dir, "--repo", "alice/x"}, 1,
			"missing metadata.json"},
		{"clear-text endpoint", "hf_good_token_77",
			[]string{ds, "--repo", "alice/x", "--endpoint", "http://hub.example.org"},
			2, "clear text"},
	}
	for _, c := range cases {
		t.Setenv("HF_TOKEN", c.env)
		uploadArgs := append([]string{"dataset", "upload", "--endpoint", srv.URL}, c.args...)
		code, out, errs := run(t, uploadArgs...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q",
				c.name, code, errs, c.code, c.want)
		}
		if c.env != "" && (strings.Contains(out, c.env) || strings.Contains(errs, c.env)) {
			t.Errorf("%s: the token was printed", c.name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("a failed upload wrote into the directory")
	}
}

// upload validates the dataset as inspect does before anything reaches the
// Hub: a truncated shard, a partial or an edited footer publishes nothing.
func TestUploadPublishesNothingInspectRefuses(t *testing.T) {
	srv := hubtest.New(t)
	const token = "hf_cli_test_token_0a1b2c"
	srv.AddToken(token, "alice", "write")
	t.Setenv("HF_TOKEN", token)
	bakeDS := func(extra ...string) string {
		dir := filepath.Join(t.TempDir(), "ds")
		args := []string{"dataset", "bake", "--n-mlps", "4", "--width", "4", "--depth", "2",
			"--n-samples", "100", "--seed", "3", "--output", dir}
		mustRun(t, append(args, extra...)...)
		return dir
	}
	truncated := bakeDS()
	shard := filepath.Join(truncated, "data", "public-00000-of-00001.parquet")
	data := readBytes(t, shard)
	if err := os.WriteFile(shard, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	partial := bakeDS("--slice", "0/2")
	for name, c := range map[string]struct{ dir, want string }{
		"truncated parquet": {truncated, "corrupt or truncated"},
		"partial":           {partial, "partial dataset"},
	} {
		code, _, errs := run(t, "dataset", "upload", c.dir, "--repo", "alice/x",
			"--endpoint", srv.URL)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 mentioning %q", name, code, errs, c.want)
		}
	}
	if exists, _ := srv.Exists("alice/x"); exists || srv.Count("whoami") != 0 {
		t.Error("an invalid dataset reached the Hub")
	}
}

// A push to a revision that holds another dataset is refused without
// --replace (a mistyped --repo must not delete someone's shards), and
// replaces it with --replace.
func TestUploadReplacesAnotherDatasetOnlyWithReplace(t *testing.T) {
	srv := hubtest.New(t)
	const token = "hf_cli_test_token_3d4e5f"
	srv.AddToken(token, "alice", "write")
	t.Setenv("HF_TOKEN", token)
	bakeDS := func(seed, split string) string {
		dir := filepath.Join(t.TempDir(), "ds")
		mustRun(t, "dataset", "bake", "--n-mlps", "2", "--width", "4", "--depth", "2",
			"--n-samples", "100", "--seed", seed, "--split", split, "--output", dir)
		return dir
	}
	first, second := bakeDS("1", "public"), bakeDS("2", "holdout")
	upload := func(dir string, extra ...string) (int, string, string) {
		args := []string{"dataset", "upload", dir, "--repo", "alice/gt", "--endpoint", srv.URL}
		return run(t, append(args, extra...)...)
	}
	if code, _, errs := upload(first); code != 0 {
		t.Fatalf("first upload: exit %d: %s", code, errs)
	}
	commits := len(srv.History("alice/gt", "main"))
	code, _, errs := upload(second)
	if code != 1 ||
		!strings.Contains(errs, "holds another dataset") ||
		!strings.Contains(errs, "--replace") {
		t.Fatalf("upload of another dataset: exit %d, stderr %q; want a refusal naming --replace",
			code, errs)
	}
	if len(srv.History("alice/gt", "main")) != commits {
		t.Fatal("the refused upload committed")
	}
	code, out, errs := upload(second, "--replace")
	if code != 0 ||
		!strings.Contains(out, "Replaced the other dataset") ||
		!strings.Contains(out, "Removed 1 file(s)") {
		t.Fatalf("upload --replace: exit %d\n%s%s", code, out, errs)
	}
	got, err := srv.Files("alice/gt", "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["data/public-00000-of-00001.parquet"]; ok {
		t.Error("the replaced dataset's shard is still on the branch")
	}
	if !bytes.Equal(got["metadata.json"], readBytes(t, filepath.Join(second, "metadata.json"))) {
		t.Error("the branch does not hold the new dataset's metadata.json")
	}
}

// A shard whose footer features were edited (weights Array3D → Array2D,
// what datasets builds the column type from) reads the same pages, but
// loads as another type: inspect, verify and upload refuse it.
func TestEditedFooterFeaturesAreRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	mustRun(t, "dataset", "bake", "--n-mlps", "2", "--width", "4", "--depth", "2",
		"--n-samples", "100", "--seed", "5", "--output", dir)
	shard := filepath.Join(dir, "data", "public-00000-of-00001.parquet")
	data := readBytes(t, shard)
	// Same length, so the footer's thrift framing stays intact; the copy
	// inside the base64 ARROW:schema is untouched.
	edited := bytes.Replace(data, []byte(`"_type": "Array3D"`), []byte(`"_type": "Array2D"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("no Array3D feature in the footer")
	}
	if err := os.WriteFile(shard, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := hubtest.New(t)
	srv.AddToken("hf_cli_token_edit_1", "alice", "write")
	t.Setenv("HF_TOKEN", "hf_cli_token_edit_1")
	for _, args := range [][]string{
		{"dataset", "inspect", dir},
		{"dataset", "verify", dir, "--mlps", "all"},
		{"dataset", "upload", dir, "--repo", "alice/x", "--endpoint", srv.URL},
	} {
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, "feature weights is") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 naming the weights feature",
				args[1], code, errs)
		}
	}
}
