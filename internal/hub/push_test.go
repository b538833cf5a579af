package hub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

const (
	token     = "hf_test_write_0123456789abcdef" // unmistakable if it leaks
	readToken = "hf_test_read_0123456789abcdef"
	repoID    = "alice/whest-gt"
)

// fixture is a stand-in Hub (listing two entries a page) with alice's
// tokens and a dataset-like directory: a multipart parquet (three parts),
// a small parquet (one PUT), a binary PNG, and the text files that go
// inline.
type fixture struct {
	srv    *hubtest.Server
	dir    string
	client *hub.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := hubtest.New(t)
	srv.ChunkSize = 64 << 10
	srv.TreePageSize = 2 // every listing takes several pages
	srv.AddToken(token, "alice", "write", "aicrowd")
	srv.AddToken(readToken, "alice", "read")
	dir := t.TempDir()
	write(t, dir, "data/public-00000-of-00001.parquet", random(t, 3*64<<10-100))
	write(t, dir, "data/holdout-00000-of-00001.parquet", random(t, 1000))
	write(t, dir, "report/loss.png", random(t, 500))
	write(t, dir, "metadata.json", []byte(`{"format": "whestbench"}`))
	write(t, dir, "README.md", []byte("# card\n"))
	return &fixture{srv: srv, dir: dir, client: client(t, srv, token)}
}

func client(t *testing.T, srv *hubtest.Server, tok string) *hub.Client {
	t.Helper()
	c, err := hub.New(srv.URL, tok)
	if err != nil {
		t.Fatal(err)
	}
	c.Backoff = time.Millisecond
	c.MaxBackoff = 5 * time.Millisecond
	return c
}

func write(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func random(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) files(t *testing.T) []hub.File {
	t.Helper()
	return dirFiles(t, f.dir)
}

// dirFiles is every file of dir (the hub pushes what it is given; which
// files are a dataset's is the caller's to decide).
func dirFiles(t *testing.T, dir string) []hub.File {
	t.Helper()
	files, left, err := hub.DirFiles(dir, func(string) bool { return true })
	if err != nil || len(left) != 0 {
		t.Fatalf("listing %s: %v (left out %v)", dir, err, left)
	}
	return files
}

func (f *fixture) push(t *testing.T, o hub.Options) hub.Result {
	t.Helper()
	res, err := f.client.Push(context.Background(), o, f.files(t))
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res
}

// sameAsDir checks that rev holds every file of dir byte for byte (besides
// the repository's own .gitattributes and whatever else was committed).
func sameAsDir(t *testing.T, srv *hubtest.Server, rev, dir string) {
	t.Helper()
	got, err := srv.Files(repoID, rev)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		want, _ := os.ReadFile(p)
		if !bytes.Equal(got[filepath.ToSlash(rel)], want) {
			t.Errorf("%s at %s: %d bytes differ from the directory's %d",
				rel, rev, len(got[filepath.ToSlash(rel)]), len(want))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPushCommitsTheWholeDirectoryInOneCommitAndTagsIt(t *testing.T) {
	f := newFixture(t)
	res := f.push(t, hub.Options{Repo: repoID, Tag: "v1", Private: true})
	if !res.CreatedRepo || res.NoOp || res.Sent != 3 || res.Reused != 0 || !res.Tagged {
		t.Fatalf("result %+v: want a created repo and 3 LFS objects sent "+
			"(two parquet, one PNG), tagged", res)
	}
	if exists, private := f.srv.Exists(repoID); !exists || !private {
		t.Errorf("repository exists=%v private=%v, want a private one", exists, private)
	}
	h := f.srv.History(repoID, "main")
	if len(h) != 2 || h[0].SHA != res.Commit || h[0].Message != hub.DefaultMessage {
		t.Fatalf("history %+v: want the initial commit and one commit %s with the default message",
			h, res.Commit)
	}
	if tags := f.srv.Tags(repoID); tags["v1"] != res.Commit {
		t.Errorf("tags %v, want v1 at %s", tags, res.Commit)
	}
	if got := f.srv.Count("part"); got != 3 {
		t.Errorf("%d part uploads, want 3 (192 KiB - 100 B in 64 KiB parts)", got)
	}
	if res.URL != f.srv.URL+"/datasets/"+repoID+"/tree/v1" {
		t.Errorf("URL %s", res.URL)
	}
	sameAsDir(t, f.srv, "v1", f.dir)
}

func TestRepushOfIdenticalFilesMakesNoCommit(t *testing.T) {
	f := newFixture(t)
	first := f.push(t, hub.Options{Repo: repoID, Tag: "v1"})
	commits, batches := f.srv.Count("commit"), f.srv.Count("batch")
	again := f.push(t, hub.Options{Repo: repoID, Tag: "v1"})
	if !again.NoOp || again.Commit != first.Commit || again.Sent != 0 || again.CreatedRepo {
		t.Fatalf("re-push %+v: want a no-op at %s", again, first.Commit)
	}
	if f.srv.Count("commit") != commits ||
		f.srv.Count("batch") != batches ||
		len(f.srv.History(repoID, "main")) != 2 {
		t.Error("the re-push sent a commit or an LFS batch")
	}
	// One changed file: one new commit, and only its bytes travel.
	write(t, f.dir, "README.md", []byte("# card for "+repoID+"\n"))
	changed := f.push(t, hub.Options{Repo: repoID})
	if changed.NoOp ||
		changed.Sent != 0 ||
		len(f.srv.History(repoID, "main")) != 3 ||
		f.srv.Count("batch") != batches {
		t.Fatalf("push of a changed README %+v: want one commit and no LFS traffic", changed)
	}
	sameAsDir(t, f.srv, "main", f.dir)
}

// A push of another dataset to the same branch is refused unless the
// caller says to replace it (a mistyped repository must not wipe someone's
// shards); replacing it leaves nothing of the earlier one in data/ or
// report/ (an old shard would be loaded with the new ones), in the same
// commit; files the owner put elsewhere stay.
func TestPushOfAnotherDatasetRemovesTheEarlierOnesDataAndReport(t *testing.T) {
	f := newFixture(t)
	write(t, f.dir, "data/public-00001-of-00002.parquet", random(t, 700))
	f.push(t, hub.Options{Repo: repoID})
	f.srv.CommitFiles(repoID, "main", "the owner's notes",
		map[string][]byte{"NOTES.md": []byte("the owner's notes\n")})

	next := t.TempDir()
	write(t, next, "data/public-00000-of-00001.parquet", random(t, 900))
	write(t, next, "metadata.json", []byte(`{"format": "whestbench", "v": 2}`))
	write(t, next, "README.md", []byte("# card 2\n"))
	files := dirFiles(t, next)
	commits := len(f.srv.History(repoID, "main"))
	_, err := f.client.Push(context.Background(), hub.Options{Repo: repoID}, files)
	var other *hub.OtherDatasetError
	if !errors.As(err, &other) ||
		!errors.Is(err, hub.ErrOtherDataset) ||
		other.Deleted != 3 ||
		!strings.Contains(err.Error(), "--replace") {
		t.Fatalf("push of another dataset without Replace: %v; "+
			"want an OtherDatasetError naming --replace and 3 files", err)
	}
	if len(f.srv.History(repoID, "main")) != commits || f.srv.Count("commit") != 1 {
		t.Fatal("the refused push committed")
	}
	res, err := f.client.Push(context.Background(), hub.Options{Repo: repoID, Replace: true}, files)
	if err != nil {
		t.Fatal(err)
	}
	if res.NoOp ||
		!res.Replaced ||
		res.Deleted != 3 ||
		len(f.srv.History(repoID, "main")) != commits+1 {
		t.Fatalf("result %+v: want one commit deleting the old holdout shard, "+
			"public shard 1 of 2 and report/loss.png", res)
	}
	got, err := f.srv.Files(repoID, "main")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{
		".gitattributes",
		"NOTES.md",
		"README.md",
		"data/public-00000-of-00001.parquet",
		"metadata.json",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("main holds %v, want %v", paths, want)
	}
	sameAsDir(t, f.srv, "main", next)
}

func TestPushResumesAfterACrashMidUpload(t *testing.T) {
	f := newFixture(t)
	// Files go in path order: the holdout parquet (one PUT) before the
	// public one, whose second part stalls until the pusher dies.
	ctx, cancel := context.WithCancel(context.Background())
	stalled := f.srv.StallPart(2)
	go func() { <-stalled; cancel() }()
	_, err := f.client.Push(ctx, hub.Options{Repo: repoID}, f.files(t))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("push killed mid-upload: %v, want context.Canceled", err)
	}
	if n := len(f.srv.History(repoID, "main")); n != 1 {
		t.Fatalf("%d commits after the crash, want only the initial one", n)
	}
	res := f.push(t, hub.Options{Repo: repoID})
	if res.Sent != 2 || res.Reused != 1 || res.NoOp {
		t.Errorf("resumed push %+v: want the holdout parquet reused, "+
			"the public parquet and the PNG sent", res)
	}
	if got := f.srv.Count("basic"); got != 2 {
		t.Errorf("%d single-PUT uploads, want 2: the holdout parquet before the crash "+
			"and the PNG after, never again", got)
	}
	if n := len(f.srv.History(repoID, "main")); n != 2 {
		t.Errorf("%d commits, want the initial one and the push's", n)
	}
	sameAsDir(t, f.srv, "main", f.dir)
}

func TestPushRetriesServerErrorsOnly(t *testing.T) {
	f := newFixture(t)
	f.srv.Fail("part", http.StatusInternalServerError, http.StatusServiceUnavailable)
	f.srv.Fail("commit", http.StatusTooManyRequests)
	f.push(t, hub.Options{Repo: repoID})
	sameAsDir(t, f.srv, "main", f.dir)

	f.srv.Fail("revision", http.StatusBadRequest)
	before := f.srv.Count("revision")
	_, err := f.client.Push(context.Background(), hub.Options{Repo: repoID}, f.files(t))
	if !errors.Is(err, hub.ErrRejected) || f.srv.Count("revision") != before+1 {
		t.Errorf("a 400 was retried or misread: %v after %d calls",
			err, f.srv.Count("revision")-before)
	}
}

func TestPushFollowsABranchThatMovedUnderIt(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	write(t, f.dir, "README.md", []byte("# second\n"))
	f.srv.BeforeNextCommit(func() {
		f.srv.CommitFiles(repoID, "main", "someone else",
			map[string][]byte{"NOTES.md": []byte("hi")})
	})
	res := f.push(t, hub.Options{Repo: repoID})
	h := f.srv.History(repoID, "main")
	if len(h) != 4 || h[0].SHA != res.Commit || h[1].Message != "someone else" {
		t.Fatalf("history %+v: want our commit on top of the other client's", h)
	}
	files, _ := f.srv.Files(repoID, "main")
	if string(files["NOTES.md"]) != "hi" {
		t.Error("the other client's file was lost")
	}
	sameAsDir(t, f.srv, "main", f.dir)
}

func TestPushErrorsSayWhatToDoAndNeverTheToken(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name   string
		client *hub.Client
		opts   hub.Options
		prep   func()
		want   error
	}{
		{
			name:   "unknown token",
			client: client(t, f.srv, "hf_wrong_"+token),
			opts:   hub.Options{Repo: repoID},
			want:   hub.ErrUnauthorized,
		},
		{
			name:   "read token",
			client: client(t, f.srv, readToken),
			opts:   hub.Options{Repo: repoID},
			want:   hub.ErrForbidden,
		},
		{
			name:   "another namespace",
			client: f.client,
			opts:   hub.Options{Repo: "bob/data"},
			want:   hub.ErrForbidden,
		},
		{
			name:   "missing branch",
			client: f.client,
			opts:   hub.Options{Repo: repoID, Revision: "release"},
			want:   hub.ErrNotFound,
		},
		{
			name:   "commit too large",
			client: f.client,
			opts:   hub.Options{Repo: repoID},
			prep:   func() { f.srv.MaxCommitBytes = 100 },
			want:   hub.ErrTooLarge,
		},
	}
	for _, c := range cases {
		if c.prep != nil {
			c.prep()
		}
		_, err := c.client.Push(context.Background(), c.opts, f.files(t))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		var he *hub.Error
		if !errors.As(err, &he) || he.Hint == "" {
			t.Errorf("%s: %v has no hint", c.name, err)
		}
		if strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("%s: the error shows the token: %v", c.name, err)
		}
	}
	f.srv.MaxCommitBytes = 64 << 20
	first := f.push(t, hub.Options{Repo: repoID, Tag: "v1"})
	write(t, f.dir, "README.md", []byte("# other\n"))
	_, err := f.client.Push(context.Background(), hub.Options{Repo: repoID, Tag: "v1"}, f.files(t))
	if !errors.Is(err, hub.ErrConflict) || f.srv.Tags(repoID)["v1"] != first.Commit {
		t.Errorf("a used tag on another commit: %v, tag now %s; "+
			"want a conflict and the tag unmoved", err, f.srv.Tags(repoID)["v1"])
	}
}

func TestPushRefusesADamagedSource(t *testing.T) {
	f := newFixture(t)
	files := f.files(t)
	for i := range files {
		if files[i].Path == "metadata.json" {
			files[i].Open = func(context.Context, int64) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader(`{"format": "tampered"}`)), nil
			}
		}
	}
	_, err := f.client.Push(context.Background(), hub.Options{Repo: repoID}, files)
	if err == nil || !strings.Contains(err.Error(), "metadata.json") {
		t.Fatalf("push of a file that does not match its sha256: %v", err)
	}
	if n := len(f.srv.History(repoID, "main")); n != 1 {
		t.Errorf("%d commits: the damaged push committed", n)
	}
}

func TestNewNeedsATokenAndAnHTTPEndpoint(t *testing.T) {
	if _, err := hub.New("", ""); !errors.Is(err, hub.ErrNoToken) {
		t.Errorf("no token: %v", err)
	}
	if _, err := hub.New("ftp://example.org", token); err == nil {
		t.Error("an ftp endpoint was accepted")
	}
	// The token goes in clear text over plain http: only to this machine.
	for _, e := range []string{
		"http://hub.example.org",
		"http://10.0.0.1:8080",
		"http://127.0.0.1.example.org",
		"http://[::2]:80",
		"http://user:pw@localhost",
	} {
		if err := hub.CheckEndpoint(e); err == nil {
			t.Errorf("endpoint %s was accepted", e)
		}
		if _, err := hub.New(e, token); err == nil {
			t.Errorf("New(%s) was accepted", e)
		}
	}
	for _, e := range []string{
		"https://huggingface.co",
		"https://hub.example.org:8443/",
		"http://localhost:8080",
		"http://127.0.0.1:1",
		"http://127.3.2.1",
		"http://[::1]:9",
	} {
		if err := hub.CheckEndpoint(e); err != nil {
			t.Errorf("endpoint %s: %v", e, err)
		}
	}
	for _, id := range []string{"alice", "alice/", "/x", "a/b/c", "alice/-x", "alice/x..y"} {
		if hub.CheckRepoID(id) == nil {
			t.Errorf("repo id %q was accepted", id)
		}
	}
}
