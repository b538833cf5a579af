package hub_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub"
)

// A token that may write to an existing repository but not create one (a
// fine-grained token) pushes: the refused creation (403, or 401 from a
// token without the scope) is followed by a check that the repository
// exists, as huggingface_hub's create_repo(exist_ok=True) does; where it
// does not, the creation's refusal is the error.
func TestPushWithATokenThatMayNotCreateRepositories(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	const fine = "hf_test_fine_0123456789abcdef"
	f.srv.AddRepoToken(fine, "alice", repoID)
	write(t, f.dir, "README.md", []byte("# pushed with a fine-grained token\n"))
	ctx := context.Background()
	res, err := client(t, f.srv, fine).Push(ctx, hub.Options{Repo: repoID}, f.files(t))
	if err != nil || res.CreatedRepo || res.NoOp {
		t.Fatalf("fine-grained push to an existing repository: %+v %v", res, err)
	}
	sameAsDir(t, f.srv, "main", f.dir)

	f.srv.Fail("create", http.StatusUnauthorized)
	if _, err := f.client.Push(ctx, hub.Options{Repo: repoID}, f.files(t)); err != nil {
		t.Errorf("a 401 on creating a repository that exists: %v", err)
	}
	_, err = client(t, f.srv, fine).Push(ctx, hub.Options{Repo: "alice/missing"}, f.files(t))
	if !errors.Is(err, hub.ErrForbidden) ||
		!strings.Contains(err.Error(), "create repo alice/missing") {
		t.Errorf("fine-grained push to a repository that does not exist: %v, "+
			"want the creation's 403", err)
	}
}

// The repository is created private only when asked: otherwise no
// visibility is sent and the organisation's default stands.
func TestPushLeavesTheOrganisationsDefaultVisibility(t *testing.T) {
	f := newFixture(t)
	f.srv.OrgDefaultPrivate("aicrowd")
	f.push(t, hub.Options{Repo: "aicrowd/gt"})
	f.push(t, hub.Options{Repo: "alice/public"})
	f.push(t, hub.Options{Repo: "alice/private", Private: true})
	for id, want := range map[string]bool{
		"aicrowd/gt":    true,
		"alice/public":  false,
		"alice/private": true,
	} {
		if _, private := f.srv.Exists(id); private != want {
			t.Errorf("%s: private %v, want %v", id, private, want)
		}
	}
}

// The files a revision holds come from the paged /tree listing, not from
// its siblings, which the Hub truncates: a re-push is still a no-op, a
// download gets every file, and a second dataset pushed without Replace is
// refused (with siblings alone it was accepted, and main then held both
// datasets' shards).
func TestTruncatedSiblingsLoseNothing(t *testing.T) {
	for _, shown := range []int{0, 2} {
		f := newFixture(t)
		write(t, f.dir, "data/public-00001-of-00002.parquet", random(t, 700))
		first := f.push(t, hub.Options{Repo: repoID})
		f.srv.TruncateSiblings(shown)
		again := f.push(t, hub.Options{Repo: repoID})
		if !again.NoOp || again.Commit != first.Commit {
			t.Errorf("siblings truncated to %d: re-push %+v, want a no-op", shown, again)
		}
		want, _ := f.srv.Files(repoID, "main")
		out := filepath.Join(t.TempDir(), "ds")
		download := hub.DownloadOptions{Repo: repoID, Output: out}
		if _, err := reader(t, f.srv, "").Download(context.Background(), download); err != nil {
			t.Fatalf("siblings truncated to %d: download: %v", shown, err)
		}
		sameFiles(t, datasettest.ReadTree(t, out), want)

		next := t.TempDir()
		write(t, next, "data/public-00000-of-00001.parquet", random(t, 900))
		write(t, next, "metadata.json", []byte(`{"format": "whestbench", "v": 2}`))
		_, err := f.client.Push(context.Background(), hub.Options{Repo: repoID}, dirFiles(t, next))
		if !errors.Is(err, hub.ErrOtherDataset) {
			t.Errorf("siblings truncated to %d: another dataset pushed without Replace: %v",
				shown, err)
		}
		if got, _ := f.srv.Files(repoID, "main"); len(got) != len(want) {
			t.Errorf("siblings truncated to %d: main holds %d files after the refused push, "+
				"want %d", shown, len(got), len(want))
		}
		replace := hub.Options{Repo: repoID, Replace: true}
		res, err := f.client.Push(context.Background(), replace, dirFiles(t, next))
		if err != nil || res.Deleted != 3 {
			t.Errorf("siblings truncated to %d: replace: %+v %v, want the old dataset's "+
				"3 other files in data/ and report/ deleted", shown, res, err)
		}
	}
}

// A renamed repository, or its id in another case, answers 307 to its
// current id, POSTs (the listing, preupload, the LFS batch, the commit)
// included: the client follows it on the same origin, re-sending the body.
func TestPushAndDownloadFollowTheRepositorysCurrentID(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	write(t, f.dir, "README.md", []byte("# pushed to the id in another case\n"))
	write(t, f.dir, "data/extra-00000-of-00001.parquet", random(t, 600))
	res, err := f.client.Push(context.Background(), hub.Options{Repo: "ALICE/Whest-GT"}, f.files(t))
	if err != nil ||
		res.NoOp ||
		res.CreatedRepo ||
		res.Sent != 1 ||
		len(f.srv.History(repoID, "main")) != 3 {
		t.Fatalf("push to the id in another case: %+v %v; want one more commit on %s",
			res, err, repoID)
	}
	sameAsDir(t, f.srv, "main", f.dir)
	want, _ := f.srv.Files(repoID, "main")
	f.srv.Rename(repoID, "alice/whest-gt-renamed")
	for _, id := range []string{repoID, "Alice/WHEST-GT-renamed"} {
		out := filepath.Join(t.TempDir(), "ds")
		download := hub.DownloadOptions{Repo: id, Output: out}
		if _, err := reader(t, f.srv, "").Download(context.Background(), download); err != nil {
			t.Fatalf("download of the renamed repository by %s: %v", id, err)
		}
		sameFiles(t, datasettest.ReadTree(t, out), want)
	}
}

// hostile is a Hub in front of the stand-in that answers chosen paths with
// a redirect to elsewhere, and a server elsewhere that records whether a
// token reached it.
type hostile struct {
	hub, elsewhere *httptest.Server
	tokens         atomic.Int32 // requests that brought an Authorization header elsewhere
}

func newHostile(t *testing.T, tls bool, redirect func(r *http.Request) string) *hostile {
	h := &hostile{}
	h.elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			h.tokens.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"mallory","auth":{"accessToken":{"role":"write"}}}`)
	}))
	front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", redirect(r))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	if tls {
		h.hub = httptest.NewTLSServer(front)
	} else {
		h.hub = httptest.NewServer(front)
	}
	t.Cleanup(func() {
		h.hub.Close()
		h.elsewhere.Close()
	})
	return h
}

// A redirect of an API call to another host, or from https to plain http
// on the same host, is not followed: the token goes to the Hub's own origin
// only. A download's redirect there (to storage) is followed, without it.
func TestRedirectsNeverCarryTheTokenElsewhere(t *testing.T) {
	for _, c := range []struct {
		name string
		tls  bool
		to   func(h *hostile, r *http.Request) string
	}{
		{"another host", false, func(h *hostile, r *http.Request) string {
			return strings.Replace(h.elsewhere.URL, "127.0.0.1", "localhost", 1) + r.URL.Path
		}},
		{"https to http on the same host", true, func(h *hostile, r *http.Request) string {
			return h.elsewhere.URL + r.URL.Path
		}},
	} {
		var h *hostile
		h = newHostile(t, c.tls, func(r *http.Request) string { return c.to(h, r) })
		cl, err := hub.New(h.hub.URL, token)
		if err != nil {
			t.Fatal(err)
		}
		hub.TrustForTest(cl, h.hub)
		_, err = cl.WhoAmI(context.Background())
		if err == nil || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%s: whoami redirected away: %v, want a refused redirect", c.name, err)
		}
		data, err := cl.ReadFile(context.Background(), repoID, "main", "metadata.json", 1<<20)
		if err != nil || !strings.Contains(string(data), "mallory") {
			t.Errorf("%s: a download redirected to storage elsewhere: %q %v", c.name, data, err)
		}
		if n := h.tokens.Load(); n != 0 {
			t.Errorf("%s: the token reached the other host %d times", c.name, n)
		}
	}
}

// A 429 that says how long to wait only in RateLimit (t=, seconds), with
// no Retry-After, is waited out as told, and the retry succeeds; a wait
// over the client's bound fails at once, saying how long the Hub asked.
func TestRateLimitIsWaitedOutAsTheHubSays(t *testing.T) {
	f := newFixture(t)
	f.srv.RateLimit("revision", time.Second)
	start := time.Now()
	f.push(t, hub.Options{Repo: repoID})
	if took := time.Since(start); took < time.Second || f.srv.RateLimited("revision") != 1 {
		t.Errorf("push under a 1 s rate limit took %s with %d rate-limited answers; "+
			"want one 429, then a wait of at least 1 s", took, f.srv.RateLimited("revision"))
	}
	f.client.MaxWait = time.Second
	f.srv.RateLimit("revision", time.Hour)
	start = time.Now()
	_, err := f.client.Push(context.Background(), hub.Options{Repo: repoID}, f.files(t))
	if !strings.Contains(err.Error(), "3600 s") || time.Since(start) > 5*time.Second {
		t.Errorf("a rate limit of an hour with MaxWait 1 s: %v after %s, "+
			"want a prompt error naming the 3600 s", err, time.Since(start))
	}
}

// Two splits with identical rows are one LFS object under two paths: it is
// sent once, and the push succeeds on the first try.
func TestOneObjectUnderTwoPathsIsSentOnce(t *testing.T) {
	f := newFixture(t)
	same := random(t, 3000)
	write(t, f.dir, "data/public-00000-of-00001.parquet", same)
	write(t, f.dir, "data/holdout-00000-of-00001.parquet", same)
	c := client(t, f.srv, token)
	c.Retries = 0
	res, err := c.Push(context.Background(), hub.Options{Repo: repoID}, f.files(t))
	if err != nil || res.Sent != 2 || f.srv.Count("batch") != 1 {
		t.Fatalf("push of one object under two paths: %+v %v after %d batches; "+
			"want 2 objects sent (the parquet and the PNG) in one batch",
			res, err, f.srv.Count("batch"))
	}
	sameAsDir(t, f.srv, "main", f.dir)
}

// A file the Hub lists under a name that cannot be written inside the
// output folder is refused before anything is written, naming the file.
func TestDownloadRefusesFileNamesOutsideTheOutput(t *testing.T) {
	for _, name := range []string{
		".", "..", "/etc/passwd", "data/../../escape", "a/./b", `a\b`, "data//x",
	} {
		f := newFixture(t)
		f.push(t, hub.Options{Repo: repoID})
		f.srv.CommitFiles(repoID, "main", "hostile", map[string][]byte{name: []byte("x")})
		parent := t.TempDir()
		download := hub.DownloadOptions{Repo: repoID, Output: filepath.Join(parent, "ds")}
		_, err := reader(t, f.srv, "").Download(context.Background(), download)
		quoted := strings.ReplaceAll(`"`+name+`"`, `\`, `\\`)
		if err == nil || !strings.Contains(err.Error(), quoted) {
			t.Errorf("a file named %q: %v, want an error naming it", name, err)
		}
		if left, _ := os.ReadDir(parent); len(left) != 0 {
			t.Errorf("a file named %q left %v beside the output", name, left)
		}
	}
}

// An anonymous 401 is the Hub's answer for a repository that does not
// exist or is private: reported as such, not as a token problem (which an
// unknown token is).
func TestAnonymous401IsNotFoundOrPrivate(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID, Private: true})
	for _, id := range []string{"alice/nope", repoID} {
		download := hub.DownloadOptions{Repo: id, Output: filepath.Join(t.TempDir(), "ds")}
		_, err := reader(t, f.srv, "").Download(context.Background(), download)
		if !errors.Is(err, hub.ErrNotFound) ||
			errors.Is(err, hub.ErrUnauthorized) ||
			!strings.Contains(err.Error(), "not found or private") {
			t.Errorf("anonymous download of %s: %v, want not found or private", id, err)
		}
	}
	_, err := reader(t, f.srv, "hf_unknown").
		ReadFile(context.Background(), repoID, "main", "metadata.json", 1<<20)
	if !errors.Is(err, hub.ErrUnauthorized) {
		t.Errorf("an unknown token: %v, want the token refused", err)
	}
}

// Every answer is read up to a cap, named in the error: a Hub (or a
// proxy) that sends an endless answer costs a bounded read.
func TestAnswersAreReadUpToACap(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"`)
		chunk := []byte(strings.Repeat("a", 64<<10))
		for i := 0; i < 1024 && r.Context().Err() == nil; i++ { // 64 MiB
			n, _ := w.Write(chunk)
			sent.Add(int64(n))
		}
		_, _ = io.WriteString(w, `"}`)
	}))
	defer srv.Close()
	c, err := hub.New(srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WhoAmI(context.Background())
	if err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("whoami answering 64 MiB: %v, want an error naming the cap", err)
	}
	if n := sent.Load(); n > 48<<20 {
		t.Errorf("the client read %d MiB of the answer", n>>20)
	}
}
