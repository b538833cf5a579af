package hubtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// caller sends raw requests to a stand-in and never follows a redirect.
type caller struct {
	t   *testing.T
	srv *hubtest.Server
}

// do sends a request (path relative to the Hub, or a whole URL) with
// token tok ("" none) and body in of content type ctype, and returns the
// answer with its body read.
func (c caller) do(method, path, tok, ctype, in string) (*http.Response, string) {
	c.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = c.srv.URL + path
	}
	req, err := http.NewRequest(method, u, strings.NewReader(in))
	if err != nil {
		c.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Accept", ctype)
	}
	noFollow := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func (c caller) create(tok, body string) {
	c.t.Helper()
	resp, out := c.do("POST", "/api/repos/create", tok, "application/json", body)
	if resp.StatusCode != 200 {
		c.t.Fatalf("create %s: %d %s", body, resp.StatusCode, out)
	}
}

// The listing the clients read instead of a revision's siblings: /tree,
// recursive or not, paged with a Link header, complete however the
// revision endpoint truncates siblings; paths-info as a form or as JSON;
// HEAD as the default branch.
func TestStandInListsTheTreeInPages(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("w", "alice", "write")
	c := caller{t, srv}
	c.create("w", `{"type":"dataset","name":"d","organization":"alice"}`)
	srv.CommitFiles("alice/d", "main", "files", map[string][]byte{
		"README.md":      []byte("r"),
		"data/a.parquet": []byte("a"),
		"data/b.parquet": []byte("b"),
		"report/x/y.png": []byte("y"),
	})
	srv.TreePageSize = 2
	srv.TruncateSiblings(1)

	var paths []string
	pages := 0
	for next := "/api/datasets/alice/d/tree/main?recursive=true&expand=false"; next != ""; pages++ {
		resp, body := c.do("GET", next, "", "", "")
		var entries []struct{ Type, Path string }
		if resp.StatusCode != 200 ||
			json.Unmarshal([]byte(body), &entries) != nil ||
			len(entries) > 2 {
			t.Fatalf("GET %s: %d %s", next, resp.StatusCode, body)
		}
		for _, e := range entries {
			paths = append(paths, e.Type+" "+e.Path)
		}
		next = ""
		if link := resp.Header.Get("Link"); link != "" {
			u, _, _ := strings.Cut(strings.TrimPrefix(link, "<"), ">")
			if !strings.HasPrefix(u, srv.URL+"/") || !strings.HasSuffix(link, `; rel="next"`) {
				t.Fatalf("Link %q: want an absolute URL on the Hub with rel=next", link)
			}
			next = u
		}
	}
	want := []string{
		"file .gitattributes",
		"file README.md",
		"directory data",
		"file data/a.parquet",
		"file data/b.parquet",
		"directory report",
		"directory report/x",
		"file report/x/y.png",
	}
	if !slices.Equal(paths, want) || pages != 4 {
		t.Errorf("the recursive listing in %d pages: %q, want %q in 4", pages, paths, want)
	}
	srv.TreePageSize = 100
	for path, want := range map[string]string{
		"/api/datasets/alice/d/tree/main":                  `"path":"data",`,
		"/api/datasets/alice/d/tree/main/report":           `"path":"report/x",`,
		"/api/datasets/alice/d/tree/HEAD/data?expand=true": `"path":"data/b.parquet"`,
	} {
		resp, body := c.do("GET", path, "", "", "")
		if resp.StatusCode != 200 ||
			!strings.Contains(body, want) ||
			strings.Contains(body, "y.png") {
			t.Errorf("GET %s: %d %s, want %s and no deeper file",
				path, resp.StatusCode, body, want)
		}
	}
	for path, want := range map[string]string{
		"/api/datasets/alice/d/tree/main/nope":            "EntryNotFound",
		"/api/datasets/alice/d/tree/nope":                 "RevisionNotFound",
		"/api/datasets/alice/d/tree/main?recursive=maybe": "",
	} {
		resp, _ := c.do("GET", path, "", "", "")
		if code := resp.Header.Get("X-Error-Code"); resp.StatusCode/100 != 4 || code != want {
			t.Errorf("GET %s: %d %s, want a 4xx with X-Error-Code %q",
				path, resp.StatusCode, code, want)
		}
	}
	for _, rev := range []string{
		"/api/datasets/alice/d",
		"/api/datasets/alice/d/revision/HEAD?expand=sha",
	} {
		var info struct {
			SHA      string
			Siblings []struct{ RFilename string }
		}
		resp, body := c.do("GET", rev, "", "", "")
		if resp.StatusCode != 200 ||
			json.Unmarshal([]byte(body), &info) != nil ||
			info.SHA != srv.History("alice/d", "main")[0].SHA ||
			len(info.Siblings) != 1 {
			t.Errorf("GET %s: %d %s, want main's commit and one sibling (truncated)",
				rev, resp.StatusCode, body)
		}
	}
	const pathsInfo = "/api/datasets/alice/d/paths-info/main"
	_, form := c.do("POST", pathsInfo, "w", "application/x-www-form-urlencoded",
		"paths=data%2Fa.parquet&paths=nope&expand=false")
	_, asJSON := c.do("POST", pathsInfo, "w", "application/json",
		`{"paths":["data/a.parquet","nope"],"expand":false}`)
	if form != asJSON ||
		!strings.Contains(form, `"path":"data/a.parquet"`) ||
		strings.Contains(form, "nope") {
		t.Errorf("paths-info as a form %s and as JSON %s: want the same one file", form, asJSON)
	}
}

// Repository ids as the Hub resolves them: a renamed repository, or an id
// in another case, answers 307 to the current id (a relative Location,
// query kept), for a POST too; an anonymous read of a missing or private
// repository is 401 RepoNotFound, an unknown token 401 "Invalid
// credentials", a repository the token cannot see 404 RepoNotFound.
func TestStandInResolvesRepositoryIDsAsTheHub(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("w", "alice", "write")
	srv.AddToken("b", "bob", "write")
	c := caller{t, srv}
	c.create("w", `{"type":"dataset","name":"old","organization":"alice"}`)
	c.create("w", `{"type":"dataset","name":"secret","organization":"alice","private":true}`)
	srv.Rename("alice/old", "alice/New")
	for _, r := range []struct{ method, path, ctype, body, want string }{
		{
			method: "GET",
			path:   "/api/datasets/alice/old/tree/main?recursive=true",
			want:   "/api/datasets/alice/New/tree/main?recursive=true",
		},
		{
			method: "GET",
			path:   "/api/datasets/ALICE/new/revision/main",
			want:   "/api/datasets/alice/New/revision/main",
		},
		{
			method: "POST",
			path:   "/api/datasets/alice/old/preupload/main",
			ctype:  "application/json",
			body:   `{"files":[]}`,
			want:   "/api/datasets/alice/New/preupload/main",
		},
		{
			method: "POST",
			path:   "/datasets/alice/old.git/info/lfs/objects/batch",
			ctype:  "application/vnd.git-lfs+json",
			body:   `{}`,
			want:   "/datasets/alice/New.git/info/lfs/objects/batch",
		},
	} {
		resp, body := c.do(r.method, r.path, "w", r.ctype, r.body)
		if location := resp.Header.Get("Location"); resp.StatusCode != 307 || location != r.want {
			t.Errorf("%s %s: %d %s Location %q, want 307 to %s",
				r.method, r.path, resp.StatusCode, body, location, r.want)
		}
	}
	resp, body := c.do("POST", "/api/datasets/alice/New/preupload/main", "w", "application/json",
		`{"files":[]}`)
	if resp.StatusCode != 200 {
		t.Errorf("preupload at the current id: %d %s", resp.StatusCode, body)
	}
	for _, r := range []struct {
		path, tok string
		status    int
		code, msg string
	}{
		{"/api/datasets/alice/nope/revision/main", "", 401, "RepoNotFound", ""},
		{"/api/datasets/alice/secret/revision/main", "", 401, "RepoNotFound", ""},
		{
			path:   "/api/datasets/alice/secret/revision/main",
			tok:    "unknown",
			status: 401,
			msg:    "Invalid credentials in Authorization header",
		},
		{"/api/datasets/alice/secret/revision/main", "b", 404, "RepoNotFound", ""},
		{"/api/datasets/alice/secret/revision/main", "w", 200, "", ""},
	} {
		resp, body := c.do("GET", r.path, r.tok, "", "")
		if resp.StatusCode != r.status ||
			resp.Header.Get("X-Error-Code") != r.code ||
			resp.Header.Get("X-Error-Message") != r.msg {
			t.Errorf("GET %s with %q: %d %v %s, want %d code %q message %q",
				r.path, r.tok, resp.StatusCode, resp.Header, body, r.status, r.code, r.msg)
		}
	}
}

// Creating repositories: a visibility, the older private flag, or neither
// (the namespace's default stands); a fine-grained token writes to the
// repositories it names and creates none.
func TestStandInCreatesRepositoriesAsTheHub(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("w", "alice", "write", "org")
	srv.OrgDefaultPrivate("org")
	c := caller{t, srv}
	for body, private := range map[string]bool{
		`{"type":"dataset","name":"a","organization":"org"}`:                          true,
		`{"type":"dataset","name":"b","organization":"org","visibility":"public"}`:    false,
		`{"type":"dataset","name":"c","organization":"alice"}`:                        false,
		`{"type":"dataset","name":"d","organization":"alice","visibility":"private"}`: true,
		`{"type":"dataset","name":"e","organization":"alice","private":true}`:         true,
	} {
		c.create("w", body)
		var in struct{ Name, Organization string }
		_ = json.Unmarshal([]byte(body), &in)
		if _, got := srv.Exists(in.Organization + "/" + in.Name); got != private {
			t.Errorf("%s: private %v, want %v", body, got, private)
		}
	}
	srv.AddRepoToken("fine", "alice", "alice/c")
	resp, _ := c.do("POST", "/api/repos/create", "fine", "application/json",
		`{"type":"dataset","name":"f","organization":"alice"}`)
	if resp.StatusCode != 403 {
		t.Errorf("a fine-grained token created a repository: %d", resp.StatusCode)
	}
	resp, body := c.do("GET", "/api/whoami-v2", "fine", "", "")
	if !strings.Contains(body, `"role":"fineGrained"`) {
		t.Errorf("whoami of a fine-grained token: %d %s", resp.StatusCode, body)
	}
	for path, want := range map[string]int{
		"/api/datasets/alice/c/preupload/main": 200,
		"/api/datasets/alice/d/preupload/main": 404,
		"/api/datasets/alice/e/preupload/main": 404,
	} {
		resp, body := c.do("POST", path, "fine", "application/json", `{"files":[]}`)
		if resp.StatusCode != want {
			t.Errorf("fine-grained POST %s: %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
	// A .gitattributes the commit brings decides the upload mode with the branch's.
	in := `{"files":[{"path":"x.custom","sample":"","size":3}],` +
		`"gitAttributes":"*.custom filter=lfs diff=lfs merge=lfs -text\n"}`
	_, body = c.do("POST", "/api/datasets/alice/c/preupload/main", "w", "application/json", in)
	if !strings.Contains(body, `"uploadMode":"lfs"`) {
		t.Errorf("preupload with gitAttributes: %s, want lfs", body)
	}
}

// The rate limit as the Hub answers it: 429, the seconds to wait in the
// RateLimit header (t=), no Retry-After, until the window ends.
func TestStandInRateLimitsAsTheHub(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("w", "alice", "write")
	c := caller{t, srv}
	srv.RateLimit("whoami", 1500*time.Millisecond)
	resp, _ := c.do("GET", "/api/whoami-v2", "w", "", "")
	rateLimit, retryAfter := resp.Header.Get("RateLimit"), resp.Header.Get("Retry-After")
	if resp.StatusCode != 429 || rateLimit != `"api";r=0;t=2` || retryAfter != "" {
		t.Errorf("rate-limited: %d RateLimit %q Retry-After %q",
			resp.StatusCode, rateLimit, retryAfter)
	}
	time.Sleep(1600 * time.Millisecond)
	resp, _ = c.do("GET", "/api/whoami-v2", "w", "", "")
	if resp.StatusCode != 200 || srv.RateLimited("whoami") != 1 {
		t.Errorf("after the window: %d, %d rate-limited answers",
			resp.StatusCode, srv.RateLimited("whoami"))
	}
}

// LFS storage lives on another origin, which refuses the token, or on the
// Hub's own, which takes it; an object listed twice in one batch gets one
// upload.
func TestStandInStorageOrigins(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("w", "alice", "write")
	c := caller{t, srv}
	c.create("w", `{"type":"dataset","name":"d","organization":"alice"}`)
	if srv.StorageURL == srv.URL || !strings.HasPrefix(srv.StorageURL, "http://127.0.0.1:") {
		t.Fatalf("storage at %s, the Hub at %s: want two origins", srv.StorageURL, srv.URL)
	}
	const lfs = "application/vnd.git-lfs+json"
	batch := func() []string {
		oid := sha256Hex("0123456789")
		object := `{"oid":"` + oid + `","size":10}`
		_, body := c.do("POST", "/datasets/alice/d.git/info/lfs/objects/batch", "w", lfs,
			`{"operation":"upload","transfers":["basic"],`+
				`"objects":[`+object+`,`+object+`],`+
				`"hash_algo":"sha_256","ref":{"name":"main"}}`)
		var out struct {
			Objects []struct {
				Actions struct{ Upload struct{ Href string } }
			}
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Objects) != 2 {
			t.Fatalf("batch: %s", body)
		}
		return []string{out.Objects[0].Actions.Upload.Href, out.Objects[1].Actions.Upload.Href}
	}
	hrefs := batch()
	u, _ := url.Parse(hrefs[0])
	if hrefs[0] != hrefs[1] || "http://"+u.Host != srv.StorageURL {
		t.Fatalf("upload URLs %q: want one, on the storage's origin %s", hrefs, srv.StorageURL)
	}
	resp, _ := c.do("PUT", hrefs[0], "w", "", "0123456789")
	if resp.StatusCode != 400 || srv.TokensAtStorage() != 1 {
		t.Errorf("the token at storage on another origin: %d, counted %d",
			resp.StatusCode, srv.TokensAtStorage())
	}
	srv.StorageOnHub = true
	hrefs = batch()
	if !strings.HasPrefix(hrefs[0], srv.URL+"/storage/") {
		t.Fatalf("upload URL %s: want the Hub's origin", hrefs[0])
	}
	if resp, body := c.do("PUT", hrefs[0], "w", "", "0123456789"); resp.StatusCode != 200 {
		t.Errorf("the token at storage on the Hub's origin: %d %s", resp.StatusCode, body)
	}
}
