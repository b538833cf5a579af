package hub_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

func reader(t *testing.T, srv *hubtest.Server, tok string) *hub.Client {
	t.Helper()
	c, err := hub.NewReader(srv.URL, tok)
	if err != nil {
		t.Fatal(err)
	}
	c.Backoff, c.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return c
}

// sameFiles fails unless got holds exactly the files of want (a revision's
// content, from the stand-in).
func sameFiles(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	for p, w := range want {
		if !bytes.Equal(got[p], w) {
			t.Errorf("%s: %d bytes, the revision's %d differ", p, len(got[p]), len(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is not in the revision", p)
		}
	}
}

// A pushed dataset comes back byte for byte: regular files from the
// resolve URL, LFS files through the redirect to storage, which refuses a
// token (so a download with one proves it was not sent there); a public
// repository needs no token.
func TestDownloadFetchesARevision(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID, Tag: "v1"})
	want, err := f.srv.Files(repoID, "v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"", readToken} {
		out := filepath.Join(t.TempDir(), "ds")
		before := f.srv.Count("lfs-file")
		var last hub.DownloadProgress
		res, err := reader(t, f.srv, tok).Download(context.Background(), hub.DownloadOptions{
			Repo:     repoID,
			Revision: "v1",
			Output:   out,
			Progress: func(p hub.DownloadProgress) { last = p },
		})
		if err != nil {
			t.Fatalf("token %q: %v", tok, err)
		}
		sameFiles(t, datasettest.ReadTree(t, out), want)
		if res.Files != len(want) || res.Commit != f.srv.Tags(repoID)["v1"] || res.Resumed != 0 {
			t.Errorf("result %+v", res)
		}
		if n := f.srv.Count("lfs-file") - before; n != 3 {
			t.Errorf("%d storage GETs, want one per LFS file (3)", n)
		}
		if last.Done != last.Total || last.FilesDone != len(want)-1 || last.Total != res.Bytes {
			t.Errorf("last progress %+v, result %+v", last, res)
		}
		if _, err := os.Stat(hub.StagingDir(out)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the staging folder is left: %v", err)
		}
	}
}

func TestDownloadOfAPrivateRepositoryNeedsAToken(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID, Private: true})
	out := filepath.Join(t.TempDir(), "ds")
	ctx := context.Background()
	_, err := reader(t, f.srv, "").Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("anonymous download of a private repository: %v, want not found or private", err)
	}
	_, err = reader(t, f.srv, readToken).
		Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = reader(t, f.srv, "hf_wrong").
		Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out + "2"})
	if !errors.Is(err, hub.ErrUnauthorized) {
		t.Errorf("an unknown token: %v", err)
	}
}

// --split keeps one split's parquet files, metadata.json and README.md,
// and names the splits there are when it matches none.
func TestDownloadOneSplit(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	c := reader(t, f.srv, "")
	out := filepath.Join(t.TempDir(), "ds")
	ctx := context.Background()
	holdout := hub.DownloadOptions{Repo: repoID, Split: "holdout", Output: out}
	if _, err := c.Download(ctx, holdout); err != nil {
		t.Fatal(err)
	}
	got := datasettest.ReadTree(t, out)
	var names []string
	for p := range got {
		names = append(names, p)
	}
	slices.Sort(names)
	want := []string{"README.md", "data/holdout-00000-of-00001.parquet", "metadata.json"}
	if !slices.Equal(names, want) {
		t.Errorf("--split holdout fetched %v, want %v", names, want)
	}
	_, err := c.Download(ctx, hub.DownloadOptions{Repo: repoID, Split: "test", Output: out + "2"})
	if err == nil ||
		!strings.Contains(err.Error(), `--split "test" matched no parquet files`) ||
		!strings.Contains(err.Error(), "holdout-00000-of-00001.parquet") {
		t.Errorf("an unknown split: %v", err)
	}
	if _, err := os.Stat(out + "2"); err == nil {
		t.Error("a refused download created its output")
	}
}

// A connection cut mid-file is resumed from where it stopped (a Range
// request), within one run or, after a run gave up, by the next one; bytes
// that do not match the listed sha256 are refused and nothing appears.
func TestDownloadResumesAndChecks(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	want, _ := f.srv.Files(repoID, "main")
	ctx := context.Background()

	// Within a run: two cuts, then the rest.
	f.srv.CutNext("lfs-file", 1000, 5000)
	out := filepath.Join(t.TempDir(), "ds")
	_, err := reader(t, f.srv, "").Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, datasettest.ReadTree(t, out), want)

	// Across runs: the first gives up after its cut, the second resumes.
	c := reader(t, f.srv, "")
	c.Retries = 0
	f.srv.CutNext("lfs-file", 70000)
	out = filepath.Join(t.TempDir(), "ds")
	_, err = c.Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a cut with no retries: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("an interrupted download created its output")
	}
	res, err := reader(t, f.srv, "").Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	// The cut hit the first LFS file in path order after the earlier
	// files: what it had written and what those files held is not fetched again.
	if res.Resumed == 0 || res.ResumedBytes < 70000 {
		t.Errorf("resumed %d files, %d bytes; want the cut file's 70000 bytes kept",
			res.Resumed, res.ResumedBytes)
	}
	sameFiles(t, datasettest.ReadTree(t, out), want)

	// Storage serving other bytes than the Hub listed.
	big := want["data/public-00000-of-00001.parquet"]
	sum := sha256.Sum256(big)
	bad := bytes.Clone(big)
	bad[100] ^= 1
	f.srv.CorruptLFS(repoID, hex.EncodeToString(sum[:]), bad)
	out = filepath.Join(t.TempDir(), "ds")
	_, err = reader(t, f.srv, "").Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if err == nil ||
		!strings.Contains(err.Error(), "sha256") ||
		!strings.Contains(err.Error(), "data/public-00000-of-00001.parquet") {
		t.Fatalf("corrupt storage: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a download that failed its check created its output")
	}
	incomplete := filepath.Join(hub.StagingDir(out),
		"data", "public-00000-of-00001.parquet.incomplete")
	if _, err := os.Stat(incomplete); err == nil {
		t.Error("the bytes that failed the check are kept for a resume")
	}
}

func TestDownloadRefusesAnExistingOutput(t *testing.T) {
	f := newFixture(t)
	before := f.srv.Count("revision")
	existing := hub.DownloadOptions{Repo: repoID, Output: t.TempDir()}
	_, err := reader(t, f.srv, "").Download(context.Background(), existing)
	if !errors.Is(err, fs.ErrExist) || f.srv.Count("revision") != before {
		t.Errorf("existing output: %v, %d Hub calls", err, f.srv.Count("revision")-before)
	}
}

func TestReadFileAndParseURI(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID, Tag: "v1"})
	data, err := reader(t, f.srv, "").ReadFile(context.Background(), repoID, "v1", "metadata.json", 1<<20)
	if err != nil || string(data) != `{"format": "whestbench"}` {
		t.Errorf("metadata.json: %q %v", data, err)
	}
	_, err = reader(t, f.srv, "").ReadFile(context.Background(), repoID, "v1", "nope.json", 1<<20)
	if !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("a missing file: %v", err)
	}
	for _, c := range []struct {
		in, repo, rev string
		ok, bad       bool
	}{
		{"hf://alice/ds", "alice/ds", "main", true, false},
		{"hf://alice/ds@v1", "alice/ds", "v1", true, false},
		{"hf://alice/ds@", "", "", true, true},
		{"hf://alice", "", "", true, true},
		{"./alice/ds", "", "", false, false},
	} {
		repo, rev, ok, err := hub.ParseURI(c.in)
		if repo != c.repo || rev != c.rev || ok != c.ok || (err != nil) != c.bad {
			t.Errorf("ParseURI(%q) = %q %q %v %v", c.in, repo, rev, ok, err)
		}
	}
}

// Bytes left beside the output by another run of something else — longer
// than the file — are not taken for a prefix of it.
func TestDownloadDiscardsAnOverlongPartialFile(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	want, _ := f.srv.Files(repoID, "main")
	c := reader(t, f.srv, "")
	c.Retries = 0
	f.srv.CutNext("lfs-file", 100)
	out := filepath.Join(t.TempDir(), "ds")
	ctx := context.Background()
	if _, err := c.Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out}); err == nil {
		t.Fatal("the cut did not stop the run")
	}
	part := filepath.Join(hub.StagingDir(out), "data", "holdout-00000-of-00001.parquet.incomplete")
	if err := os.WriteFile(part, bytes.Repeat([]byte{7}, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := reader(t, f.srv, "").Download(ctx, hub.DownloadOptions{Repo: repoID, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, datasettest.ReadTree(t, out), want)
}
