package hubtest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// The stand-in must refuse what the Hub refuses, or tests against it prove
// nothing: these are raw requests a careless client could send.
func TestStandInRefusesMalformedRequests(t *testing.T) {
	srv := hubtest.New(t)
	srv.ChunkSize = 4
	srv.AddToken("w", "alice", "write")
	srv.AddToken("r", "alice", "read")
	send := func(method, path, tok, ctype, body string) (int, string) {
		t.Helper()
		url := path
		if strings.HasPrefix(path, "/") {
			url = srv.URL + path
		}
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("Accept", "application/vnd.git-lfs+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	const js, lfs, nd = "application/json", "application/vnd.git-lfs+json", "application/x-ndjson"
	const (
		createPath = "/api/repos/create"
		commitPath = "/api/datasets/alice/d/commit/main"
		batchPath  = "/datasets/alice/d.git/info/lfs/objects/batch"
	)
	code, _ := send("POST", createPath, "w", js,
		`{"type":"dataset","name":"d","organization":"alice","private":false}`)
	if code != 200 {
		t.Fatalf("create: %d", code)
	}
	content := "0123456789" // 10 bytes: parts of 4, 4, 2
	sum := sha256.Sum256([]byte(content))
	oid := hex.EncodeToString(sum[:])
	batch := `{"operation":"upload","transfers":["basic","multipart"],` +
		`"objects":[{"oid":"` + oid + `","size":10}],"hash_algo":"sha256"}`
	code, body := send("POST", batchPath, "w", lfs, batch)
	if code != 200 {
		t.Fatalf("batch: %d %s", code, body)
	}
	var ans struct {
		Objects []struct {
			Actions struct {
				Upload struct {
					Href   string            `json:"href"`
					Header map[string]string `json:"header"`
				} `json:"upload"`
			} `json:"actions"`
		} `json:"objects"`
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil || len(ans.Objects) != 1 {
		t.Fatalf("batch answer %s: %v", body, err)
	}
	up := ans.Objects[0].Actions.Upload
	if up.Header["chunk_size"] != "4" || up.Header["00003"] == "" || up.Header["00004"] != "" {
		t.Fatalf("multipart header %v: want chunk_size 4 and parts 00001-00003", up.Header)
	}
	commitHeader := `{"key":"header","value":{"summary":"s","description":"","parentCommit":""}}` +
		"\n"
	commitLFS := commitHeader +
		`{"key":"lfsFile","value":{"path":"a.parquet","algo":"sha256",` +
		`"oid":"` + oid + `","size":10}}` + "\n"
	staleParent := `"parentCommit":"` + strings.Repeat("0", 40) + `"`

	cases := []struct {
		name                         string
		method, path, tok, ctype, in string
		want                         int
	}{
		{"no token", "GET", "/api/whoami-v2", "", "", "", 401},
		{"unknown token", "GET", "/api/whoami-v2", "x", "", "", 401},
		{"read token writes", "POST", commitPath, "r", nd, commitLFS, 403},
		{"another namespace", "POST", createPath, "w", js,
			`{"type":"dataset","name":"d","organization":"bob","private":false}`, 403},
		{"repo exists", "POST", createPath, "w", js,
			`{"type":"dataset","name":"d","organization":"alice","private":false}`, 409},
		{"unknown field", "POST", createPath, "w", js,
			`{"type":"dataset","name":"e","organization":"alice","privat":true}`, 400},
		{"malformed JSON", "POST", "/api/datasets/alice/d/preupload/main", "w", js,
			`{"files":[`, 400},
		{"wrong content type", "POST", batchPath, "w", js, batch, 400},
		{"bad oid", "POST", batchPath, "w", lfs, strings.Replace(batch, oid, "abc", 1), 422},
		{"token sent to storage on another origin", "PUT", up.Header["00001"], "w", "",
			"0123", 400},
		{"short part", "PUT", up.Header["00001"], "", "", "012", 400},
		{"commit of an object never uploaded", "POST", commitPath, "w", nd, commitLFS, 422},
		{"header not first", "POST", commitPath, "w", nd,
			strings.SplitN(commitLFS, "\n", 2)[1], 400},
		{"binary file inline", "POST", commitPath, "w", nd, commitHeader +
			`{"key":"file","value":{"path":"x.parquet","encoding":"base64",` +
			`"content":"AAE="}}`, 400},
		{"stale parent", "POST", commitPath, "w", nd,
			strings.Replace(commitLFS, `"parentCommit":""`, staleParent, 1), 412},
		{"visibility and private", "POST", createPath, "w", js,
			`{"type":"dataset","name":"e","organization":"alice","private":true,` +
				`"visibility":"private"}`, 400},
		{"protected dataset", "POST", createPath, "w", js,
			`{"type":"dataset","name":"e","organization":"alice","visibility":"protected"}`, 400},
		{"ref of no branch", "POST", batchPath, "w", lfs,
			strings.Replace(batch, `"hash_algo"`,
				`"ref":{"name":"refs/heads/main"},"hash_algo"`, 1), 422},
		{"another hash", "POST", batchPath, "w", lfs,
			strings.Replace(batch, `"sha256"`, `"sha1"`, 1), 409},
		{"deleting a file that is not there", "POST", commitPath, "w", nd, commitHeader +
			`{"key":"deletedFile","value":{"path":"data/gone.parquet"}}`, 404},
		{"missing branch", "GET", "/api/datasets/alice/d/revision/nope", "w", "", "", 404},
	}
	for _, c := range cases {
		if code, body := send(c.method, c.path, c.tok, c.ctype, c.in); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	etags := make([]string, 4)
	for n, part := range []string{"0123", "4567", "89"} {
		partURL := up.Header[[]string{"00001", "00002", "00003"}[n]]
		req, _ := http.NewRequest("PUT", partURL, strings.NewReader(part))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("part %d: %v %v", n+1, err, resp.Status)
		}
		resp.Body.Close()
		etags[n+1] = resp.Header.Get("ETag")
	}
	completion := func(e2 string) string {
		return `{"oid":"` + oid + `","parts":[` +
			`{"partNumber":1,"etag":` + jsonString(etags[1]) + `},` +
			`{"partNumber":2,"etag":` + jsonString(e2) + `},` +
			`{"partNumber":3,"etag":` + jsonString(etags[3]) + `}]}`
	}
	if code, body := send("POST", up.Href, "", lfs, completion(`"0000"`)); code != 400 {
		t.Errorf("completion with a wrong ETag: %d %s, want 400", code, body)
	}
	if code, body := send("POST", up.Href, "", lfs, completion(etags[2])); code != 200 {
		t.Fatalf("completion: %d %s", code, body)
	}
	if code, body := send("POST", commitPath, "w", nd, commitLFS); code != 200 {
		t.Fatalf("commit of the uploaded object: %d %s", code, body)
	}
	files, err := srv.Files("alice/d", "main")
	if err != nil || string(files["a.parquet"]) != content {
		t.Errorf("a.parquet at main = %q (%v), want %q", files["a.parquet"], err, content)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
