// Package hubjs runs the official JavaScript client of the Hugging Face
// Hub (@huggingface/hub, pinned by package.json and package-lock.json here)
// against the Hub stand-in internal/hub/hubtest, over a real HTTP server
// on 127.0.0.1. The stand-in is ours; this client is not, so what it
// accepts and how it behaves judge the stand-in, and through it the tests
// of package hub that run against the stand-in. `make hubjs` installs the
// client (make test does); HUBJS_REQUIRED=1 makes a missing install fail
// the test instead of skipping it.
package hubjs

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/cli"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
)

// needNode returns node's path, or skips (fails with HUBJS_REQUIRED=1)
// when Node or the client's npm packages are missing.
func needNode(t *testing.T) string {
	t.Helper()
	need := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...) +
			"; install with: make hubjs (npm install --prefix internal/hub/hubjs)"
		if os.Getenv("HUBJS_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		need("node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@huggingface", "hub")); err != nil {
		need("@huggingface/hub is not installed")
	}
	return node
}

// official runs official.mjs with args, the token in HF_TOKEN, and decodes
// what it prints into out.
func official(t *testing.T, node, token string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(node, append([]string{"official.mjs"}, args...)...)
	cmd.Env = append(os.Environ(), "HF_TOKEN="+token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("@huggingface/hub %s: %v\n%s", strings.Join(args[:1], " "), err, stderr.Bytes())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("@huggingface/hub %s printed %q: %v", args[0], stdout, err)
	}
}

// whestbake runs the whestbake CLI in this process.
func whestbake(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Execute(args, &out, &errb); code != 0 {
		t.Fatalf("whestbake %s: exit %d\n%s%s",
			strings.Join(args, " "), code, out.Bytes(), errb.Bytes())
	}
	return out.String()
}

// pushed is what official.mjs push prints.
type pushed struct {
	User, RepoURL, Commit string
}

// downloaded is what official.mjs download prints.
type downloaded struct {
	SHA   string
	Files []struct {
		Path       string
		Size       int64
		LFS        *string
		ProbedSize int64
	}
}

// sameTree fails unless got holds exactly want's files, byte for byte.
func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok || !bytes.Equal(g, w) {
			t.Errorf("%s: %s has %d bytes (present %v), want the %d bytes it was given",
				what, p, len(g), ok, len(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s was not given", what, p)
		}
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The official client against the stand-in, both ways: it creates a
// private repository and commits a text file inline, a small binary in one
// PUT and a 2.5 MiB binary in multipart parts; it reads the repository
// back (datasetInfo at HEAD, listFiles across Link-paged /tree answers, a
// Range bytes=0-0 probe and a download of every file, LFS files through a
// redirect to storage on another origin that must get no token, then on
// the Hub's own origin); it reads a dataset that `whestbake dataset upload`
// pushed; and `whestbake dataset download` reads a dataset it pushed.
func TestOfficialClientAgainstStandIn(t *testing.T) {
	node := needNode(t)
	srv := hubtest.New(t)
	srv.ChunkSize = 1 << 20
	srv.TreePageSize = 3
	const token = "hf_official_client_5c9d0e"
	srv.AddToken(token, "alice", "write")

	own := map[string][]byte{
		"README.md":        []byte("# made by the official client\n"),
		"notes/a.txt":      []byte("a\n"),
		"notes/deep/b.txt": []byte("b\n"),
		"small.bin":        randomBytes(t, 1000),
		"weights.bin":      randomBytes(t, 5<<19+100),
	}
	dir := t.TempDir()
	writeTree(t, dir, own)
	var p pushed
	official(t, node, token, &p, "push", srv.URL, "alice/made-by-js", dir, "private")
	if exists, private := srv.Exists("alice/made-by-js"); !exists || !private || p.User != "alice" {
		t.Fatalf("after push (%+v): exists %v, private %v; "+
			"want the private repository visibility asked", p, exists, private)
	}
	onHub, err := srv.Files("alice/made-by-js", "main")
	if err != nil {
		t.Fatal(err)
	}
	delete(onHub, ".gitattributes")
	sameTree(t, "the stand-in after the official client's commit", onHub, own)
	parts := srv.Count("part")
	basic := srv.Count("basic")
	done := srv.Count("complete")
	if parts != 3 || basic != 1 || done != 1 {
		t.Errorf("%d part PUTs, %d single PUTs, %d completions; "+
			"want weights.bin in 3 parts, small.bin in one PUT", parts, basic, done)
	}

	for _, onHubOrigin := range []bool{false, true} {
		srv.StorageOnHub = onHubOrigin
		trees, probes := srv.Count("tree"), len(srv.Ranges("lfs-file"))
		out := t.TempDir()
		var d downloaded
		official(t, node, token, &d, "download", srv.URL, "alice/made-by-js", "-", out)
		sameTree(t,
			fmt.Sprintf("the official client's download (storage on the Hub's origin: %v)",
				onHubOrigin),
			datasettest.ReadTree(t, out),
			withGitAttributes(t, srv, "alice/made-by-js", own))
		if n := srv.Count("tree") - trees; n < 3 {
			t.Errorf("listFiles read %d pages of /tree, want at least 3 (9 entries, 3 a page)", n)
		}
		if got := srv.Ranges("lfs-file")[probes:]; !slices.Contains(got, "bytes=0-0") {
			t.Errorf("the storage saw Range headers %q, want the client's bytes=0-0 probe", got)
		}
		for _, f := range d.Files {
			if f.ProbedSize != f.Size {
				t.Errorf("%s: the probe found %d bytes, the listing %d",
					f.Path, f.ProbedSize, f.Size)
			}
		}
	}
	if n := srv.TokensAtStorage(); n != 0 {
		t.Errorf("the storage on another origin received the token %d times", n)
	}

	ds := bakeDataset(t)
	t.Setenv("HF_TOKEN", token)
	whestbake(t, "dataset", "upload", ds,
		"--repo", "alice/gt", "--tag", "v1", "--endpoint", srv.URL)
	out := t.TempDir()
	var d downloaded
	official(t, node, "", &d, "download", srv.URL, "alice/gt", "v1", out)
	got := datasettest.ReadTree(t, out)
	want := withGitAttributes(t, srv, "alice/gt", datasettest.ReadTree(t, ds))
	if card := string(got["README.md"]); !strings.Contains(card, "alice/gt") {
		t.Errorf("the card the official client read is not rendered for alice/gt:\n%s", card)
	}
	want["README.md"] = got["README.md"]
	sameTree(t, "the official client's download of `whestbake dataset upload`", got, want)

	official(t, node, token, &p, "push", srv.URL, "alice/by-js", ds, "-")
	back := filepath.Join(t.TempDir(), "back")
	whestbake(t, "dataset", "download", "hf://alice/by-js", "--output", back, "--endpoint", srv.URL)
	sameTree(t, "`whestbake dataset download` of the official client's commit",
		datasettest.ReadTree(t, back),
		withGitAttributes(t, srv, "alice/by-js", datasettest.ReadTree(t, ds)))
	whestbake(t, "dataset", "inspect", back)
}

// withGitAttributes is files plus the .gitattributes the Hub gave repo.
func withGitAttributes(
	t *testing.T,
	srv *hubtest.Server,
	repo string,
	files map[string][]byte,
) map[string][]byte {
	t.Helper()
	onHub, err := srv.Files(repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{".gitattributes": onHub[".gitattributes"]}
	for p, d := range files {
		out[p] = d
	}
	return out
}

// bakeDataset bakes a two-split dataset with the whestbake CLI: two
// parquet shards, their prepared Arrow folders, metadata.json and the card.
func bakeDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for split, seeds := range map[string]string{"public": "[1, 2, 3]", "holdout": "[4, 5, 6]"} {
		writeTree(t, dir, map[string][]byte{split + ".json": []byte(seeds)})
		whestbake(t, "dataset", "bake",
			"--n-mlps", "3", "--n-samples", "500", "--width", "8", "--depth", "2",
			"--mlp-seeds", at(split+".json"), "--split", split, "-o", at(split))
	}
	whestbake(t, "dataset", "combine-splits", at("public"), at("holdout"), "-o", at("ds"))
	return at("ds")
}
