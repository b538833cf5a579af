package hubtest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// The download endpoints as the Hub serves them, and strict where a client
// could go wrong: a regular file from resolve with its git blob sha1 as
// ETag, an LFS file as a 302 to a signed storage URL (X-Linked-Etag and
// X-Linked-Size), which refuses the token and an altered signature; Range
// bytes=N- only; anonymous reads of public repositories only.
func TestStandInServesDownloads(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddToken("w", "alice", "write")
	noFollow := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	get := func(url, tok, rng string) (*http.Response, string) {
		t.Helper()
		if strings.HasPrefix(url, "/") {
			url = srv.URL + url
		}
		req, _ := http.NewRequest("GET", url, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	create := func(name string, private bool) {
		body := `{"type":"dataset","name":"` + name + `","organization":"alice",` +
			`"private":` + strconv.FormatBool(private) + `}`
		req, _ := http.NewRequest("POST", srv.URL+"/api/repos/create", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer w")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("create %s: %v %v", name, err, resp.Status)
		}
		resp.Body.Close()
	}
	create("pub", false)
	create("priv", true)
	srv.CommitFiles("alice/pub", "main", "add",
		map[string][]byte{"metadata.json": []byte(`{"a": 1}`)})

	const metadata = "/datasets/alice/pub/resolve/main/metadata.json"
	resp, body := get(metadata, "", "")
	if resp.StatusCode != 200 ||
		body != `{"a": 1}` ||
		resp.Header.Get("ETag") == "" ||
		resp.Header.Get("X-Repo-Commit") == "" {
		t.Errorf("regular file: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	for rng, want := range map[string]string{
		"bytes=3-":  `": 1}`,
		"bytes=0-0": "{",
		"bytes=1-3": `"a"`,
		"bytes=-2":  "1}",
	} {
		resp, body := get(metadata, "", rng)
		contentRange := resp.Header.Get("Content-Range")
		if resp.StatusCode != 206 || body != want || !strings.HasSuffix(contentRange, "/8") {
			t.Errorf("Range %s: %d %q (%s), want 206 %q",
				rng, resp.StatusCode, body, contentRange, want)
		}
	}
	for rng, want := range map[string]int{
		"bytes=0-1,3-4": 400,
		"bytes=99-":     416,
		"bytes=5-2":     416,
	} {
		if resp, _ := get(metadata, "", rng); resp.StatusCode != want {
			t.Errorf("Range %s: %d, want %d", rng, resp.StatusCode, want)
		}
	}
	for _, c := range []struct {
		path, tok string
		want      int
	}{
		{"/datasets/alice/priv/resolve/main/.gitattributes", "", 401},
		{"/datasets/alice/priv/resolve/main/.gitattributes", "w", 200},
		{"/datasets/alice/pub/resolve/main/metadata.json", "unknown", 401},
		{"/datasets/alice/pub/resolve/main/missing.json", "", 404},
		{"/datasets/alice/pub/resolve/nope/metadata.json", "", 404},
		{"/api/datasets/alice/pub/revision/main", "", 200},
		{"/api/datasets/alice/priv/revision/main", "", 401},
	} {
		if resp, body := get(c.path, c.tok, ""); resp.StatusCode != c.want {
			t.Errorf("GET %s (token %q): %d %s, want %d",
				c.path, c.tok, resp.StatusCode, body, c.want)
		}
	}

	// An LFS file: pushed through the client in package hub's tests; here
	// the redirect and the storage URL's strictness, on an object put
	// there by a commit of a .parquet (tracked by LFS) through the API.
	if got := lfsRedirect(t, srv, get); got != "" {
		t.Error(got)
	}
}

// lfsRedirect pushes a small LFS object through the batch API and checks
// its download; it returns a description of what went wrong, or "".
func lfsRedirect(
	t *testing.T,
	srv *hubtest.Server,
	get func(url, tok, rng string) (*http.Response, string),
) string {
	t.Helper()
	content := "0123456789"
	oid := sha256Hex(content)
	var send func(method, url, tok, ctype, body string) int
	send = func(method, url, tok, ctype, body string) int {
		if strings.HasPrefix(url, "/") {
			url = srv.URL + url
		}
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
			req.Header.Set("Accept", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if strings.Contains(url, "objects/batch") {
			var buf strings.Builder
			_, _ = io.Copy(&buf, resp.Body)
			href := between(buf.String(), `"href":"`, `"`)
			if href != "" {
				send("PUT", href, "", "", content)
			}
		}
		return resp.StatusCode
	}
	const lfs = "application/vnd.git-lfs+json"
	batch := `{"operation":"upload","transfers":["basic"],` +
		`"objects":[{"oid":"` + oid + `","size":10}],"hash_algo":"sha256"}`
	const batchPath = "/datasets/alice/pub.git/info/lfs/objects/batch"
	if code := send("POST", batchPath, "w", lfs, batch); code != 200 {
		return "batch failed"
	}
	commit := `{"key":"header","value":{"summary":"s","description":"","parentCommit":""}}` +
		"\n" +
		`{"key":"lfsFile","value":{"path":"a.parquet","algo":"sha256",` +
		`"oid":"` + oid + `","size":10}}` + "\n"
	code := send("POST", "/api/datasets/alice/pub/commit/main", "w", "application/x-ndjson", commit)
	if code != 200 {
		return "commit failed"
	}
	resp, _ := get("/datasets/alice/pub/resolve/main/a.parquet", "", "")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 302 ||
		resp.Header.Get("X-Linked-Etag") != `"`+oid+`"` ||
		resp.Header.Get("X-Linked-Size") != "10" ||
		loc == "" {
		return "LFS resolve: not a 302 with X-Linked-Etag/Size: " + resp.Status
	}
	if resp, body := get(loc, "", ""); resp.StatusCode != 200 || body != content {
		return "storage: " + resp.Status
	}
	if resp, _ := get(loc, "w", ""); resp.StatusCode != 400 {
		return "storage on another origin took the token: " + resp.Status
	}
	badSignature := strings.Replace(loc, "Signature=", "Signature=0", 1)
	if resp, _ := get(badSignature, "", ""); resp.StatusCode != 403 {
		return "storage took a bad signature: " + resp.Status
	}
	// /raw/ serves what git holds: the LFS pointer.
	pointer := "version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize 10\n"
	resp, body := get("/datasets/alice/pub/raw/main/a.parquet", "", "")
	if resp.StatusCode != 200 || body != pointer {
		return "raw of an LFS file: " + resp.Status + " " + body
	}
	return ""
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return strings.ReplaceAll(v, `\u0026`, "&")
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
