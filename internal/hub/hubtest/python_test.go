package hubtest_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// What huggingface_hub reads of the Hub's answers, which the official
// Python client found the stand-in lacked (internal/hub/hubpy): the
// existing repository's url in a 409 to create_repo(exist_ok=True);
// /api/validate-yaml, which upload_folder asks about a README.md; a
// verification posted as application/json; sizes, blob ids and LFS objects
// of the siblings with blobs=true; and the oid of each file preupload is
// asked about that the branch holds, by which upload_folder leaves
// unchanged files out (and makes no commit when none changed).
func TestStandInAnswersWhatHuggingfaceHubReads(t *testing.T) {
	srv := hubtest.New(t)
	srv.ChunkSize = 1 << 20
	srv.AddToken("w", "alice", "write")
	c := caller{t, srv}
	const js = "application/json"
	c.create("w", `{"type":"dataset","name":"d","organization":"alice"}`)

	resp, body := c.do("POST", "/api/repos/create", "w", js,
		`{"type":"dataset","name":"D","organization":"alice"}`)
	var conflict struct{ Error, URL string }
	if resp.StatusCode != 409 || json.Unmarshal([]byte(body), &conflict) != nil ||
		conflict.URL != srv.URL+"/datasets/alice/d" {
		t.Errorf("create of an existing repository: %d %s; want 409 with its url", resp.StatusCode,
			body)
	}

	for content, want := range map[string]string{
		"---\nlicense: mit\n---\n# card\n": `200 {"errors":[],"warnings":[]}`,
		"# no front matter\n":              `200 {"errors":[],"warnings":[{"message":`,
		"---\nlicense: [mit\n---\n":        `400 {"errors":[{"message":`,
	} {
		in, _ := json.Marshal(map[string]string{"content": content, "repoType": "dataset"})
		resp, body := c.do("POST", "/api/validate-yaml", "w", js, string(in))
		if got := fmt.Sprint(resp.StatusCode, " ", body); !strings.HasPrefix(got, want) {
			t.Errorf("validate-yaml of %q: %s, want %s…", content, got, want)
		}
	}

	data := "0123456789"
	sum := sha256.Sum256([]byte(data))
	oid := hex.EncodeToString(sum[:])
	batch := `{"operation":"upload","transfers":["basic","multipart","xet"],` +
		`"objects":[{"oid":"` + oid + `","size":10}],"hash_algo":"sha256"}`
	const lfs = "application/vnd.git-lfs+json"
	_, body = c.do("POST", "/datasets/alice/d.git/info/lfs/objects/batch", "w", lfs, batch)
	var ans struct {
		Transfer string
		Objects  []struct {
			Actions struct{ Upload, Verify struct{ Href string } }
		}
	}
	if json.Unmarshal([]byte(body), &ans) != nil || ans.Transfer == "xet" ||
		len(ans.Objects) != 1 {
		t.Fatalf("batch offering xet: %s; want an LFS transfer", body)
	}
	if resp, body := c.do("PUT", ans.Objects[0].Actions.Upload.Href, "", "", data); resp.StatusCode !=
		200 {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	verify := fmt.Sprintf(`{"oid":%q,"size":10}`, oid)
	if resp, body := c.do("POST", ans.Objects[0].Actions.Verify.Href, "w", js,
		verify); resp.StatusCode != 200 {
		t.Errorf("verify posted as application/json: %d %s", resp.StatusCode, body)
	}
	commit := `{"key":"header","value":{"summary":"s","description":"","parentCommit":""}}` + "\n" +
		`{"key":"lfsFile","value":{"path":"x.bin","algo":"sha256","oid":"` + oid + `","size":10}}` +
		"\n" + `{"key":"file","value":{"path":"a.txt","encoding":"base64","content":"YQo="}}` + "\n"
	if resp, body := c.do("POST", "/api/datasets/alice/d/commit/main", "w",
		"application/x-ndjson", commit); resp.StatusCode != 200 {
		t.Fatalf("commit: %d %s", resp.StatusCode, body)
	}

	_, body = c.do("GET", "/api/datasets/alice/d/revision/main?blobs=true", "w", "", "")
	var info struct {
		Siblings []struct {
			RFilename string
			Size      int64
			BlobID    string
			LFS       *struct {
				SHA256      string
				Size        int64
				PointerSize int64
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil {
		t.Fatal(err)
	}
	described := map[string]string{}
	for _, s := range info.Siblings {
		d := fmt.Sprintf("%d %s", s.Size, s.BlobID)
		if s.LFS != nil {
			d += fmt.Sprintf(" lfs %s %d %d", s.LFS.SHA256, s.LFS.Size, s.LFS.PointerSize)
		}
		described[s.RFilename] = d
	}
	pointer := "version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize 10\n"
	for p, want := range map[string]string{
		"a.txt": "2 " + blob("a\n"),
		"x.bin": fmt.Sprintf("10 %s lfs %s 10 %d", blob(pointer), oid, len(pointer)),
	} {
		if described[p] != want {
			t.Errorf("blobs=true describes %s as %q, want %q", p, described[p], want)
		}
	}

	pre := `{"files":[{"path":"a.txt","sample":"","size":2},{"path":"x.bin","sample":"","size":10},` +
		`{"path":"new.txt","sample":"","size":1}]}`
	_, body = c.do("POST", "/api/datasets/alice/d/preupload/main", "w", js, pre)
	var modes struct{ Files []struct{ Path, OID string } }
	if err := json.Unmarshal([]byte(body), &modes); err != nil {
		t.Fatal(err)
	}
	oids := map[string]string{}
	for _, f := range modes.Files {
		oids[f.Path] = f.OID
	}
	if want := map[string]string{"a.txt": blob("a\n"), "x.bin": oid, "new.txt": ""}; fmt.Sprint(
		oids) != fmt.Sprint(want) {
		t.Errorf("preupload oids %v, want %v: the branch's file's (git sha1, LFS sha256), "+
			"none for a new path", oids, want)
	}
}

// blob is git's blob sha1 of s.
func blob(s string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00%s", len(s), s)
	return hex.EncodeToString(h.Sum(nil))
}
