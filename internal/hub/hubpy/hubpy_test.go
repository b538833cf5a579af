// Package hubpy runs the official Python client of the Hugging Face Hub
// (huggingface_hub), whestbench's `whest dataset` verbs and loader, and
// `datasets.load_dataset`, at the versions internal/pyjudge pins, against
// the Hub stand-in internal/hub/hubtest over a real HTTP server on
// 127.0.0.1. The stand-in is ours; these programs are not, so what they
// accept and how they behave judge the stand-in, and through it the tests
// of package hub that run against it. Without the Python judge the tests
// skip (fail under PYJUDGE_REQUIRED=1): make pyjudge installs it.
package hubpy

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/cli"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
	"github.com/whestbake/whestbake/internal/pyjudge"
)

// official is the driver of the Python programs (official.py).
//
//go:embed official.py
var official string

// judge is the Python judge pointed at one stand-in with one token.
type judge struct {
	env         *pyjudge.Env
	srv         *hubtest.Server
	token, home string
}

func newJudge(t *testing.T, srv *hubtest.Server, token string) *judge {
	return &judge{env: pyjudge.Need(t), srv: srv, token: token, home: t.TempDir()}
}

// cmd is a run against the stand-in: HF_ENDPOINT names it, HF_TOKEN carries
// the token ("" none), HF_HOME keeps the caches in the test's folder.
func (j *judge) cmd(token string) pyjudge.Cmd {
	return pyjudge.Cmd{Env: []string{
		"HF_ENDPOINT=" + j.srv.URL,
		"HF_TOKEN=" + token,
		"HF_HOME=" + j.home,
		"HF_DATASETS_CACHE=" + filepath.Join(j.home, "datasets"),
		"HF_HUB_ETAG_TIMEOUT=30",
		"HF_HUB_DOWNLOAD_TIMEOUT=30",
	}}
}

// run runs official.py with args and decodes what it printed into out.
func (j *judge) run(t *testing.T, token string, out any, args ...string) {
	t.Helper()
	r := j.env.PythonOK(t, j.cmd(token), official, args...)
	if err := json.Unmarshal([]byte(r.Stdout), out); err != nil {
		t.Fatalf("official.py %s printed %q: %v\n%s", args[0], r.Stdout, err, r.Stderr)
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

// pushed is what official.py push prints.
type pushed struct {
	User     string `json:"user"`
	RepoURL  string `json:"repo_url"`
	AgainURL string `json:"again_url"`
	Commit   string `json:"commit"`
	// AgainCommit is what a second upload_folder of the same folder
	// returned: the same commit, none made.
	AgainCommit string `json:"again_commit"`
	Refs        refs   `json:"refs"`
}

type refs struct {
	Branches map[string]string `json:"branches"`
	Tags     map[string]string `json:"tags"`
}

// read is what official.py read prints.
type read struct {
	SHA         string `json:"sha"`
	RepoInfoSHA string `json:"repo_info_sha"`
	Private     bool   `json:"private"`
	Siblings    []struct {
		Path string  `json:"path"`
		Size *int64  `json:"size"`
		LFS  *string `json:"lfs"`
	} `json:"siblings"`
	Tree []struct {
		Path string  `json:"path"`
		Type string  `json:"type"`
		Size int64   `json:"size"`
		LFS  *string `json:"lfs"`
	} `json:"tree"`
	Snapshot string `json:"snapshot"`
	Files    map[string]struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	} `json:"files"`
	Refs refs `json:"refs"`
}

// check fails unless r describes exactly files (path → content): the
// listing, the siblings with their sizes and LFS sha256s, the snapshot's
// files and every hf_hub_download, byte for byte.
func (r read) check(t *testing.T, what string, files map[string][]byte, lfs func(string) bool) {
	t.Helper()
	snapshot := datasettest.ReadTree(t, r.Snapshot)
	for p := range snapshot {
		// The client's own record of what it fetched into a local_dir
		// (_local_folder.py): not a file of the repository.
		if strings.HasPrefix(p, ".cache/huggingface/") {
			delete(snapshot, p)
		}
	}
	sameTree(t, what+": snapshot_download", snapshot, files)
	listed := map[string]bool{}
	for _, e := range r.Tree {
		if e.Type != "file" {
			continue
		}
		listed[e.Path] = true
		want, ok := files[e.Path]
		switch {
		case !ok:
			t.Errorf("%s: list_repo_tree lists %s, which was not pushed", what, e.Path)
		case e.Size != int64(len(want)):
			t.Errorf("%s: list_repo_tree: %s of %d bytes, pushed %d", what, e.Path, e.Size, len(want))
		case (e.LFS != nil) != lfs(e.Path) || (e.LFS != nil && *e.LFS != sum(want)):
			t.Errorf("%s: list_repo_tree: %s has LFS sha256 %v, want LFS %v with %s",
				what, e.Path, e.LFS, lfs(e.Path), sum(want))
		}
	}
	for p, want := range files {
		got, ok := r.Files[p]
		if !listed[p] || !ok || got.SHA256 != sum(want) || got.Size != int64(len(want)) {
			t.Errorf("%s: %s listed %v, hf_hub_download got %+v, want %d bytes with sha256 %s",
				what, p, listed[p], got, len(want), sum(want))
		}
	}
	if len(r.Siblings) != len(files) {
		t.Errorf("%s: dataset_info has %d siblings, want %d", what, len(r.Siblings), len(files))
	}
	for _, s := range r.Siblings {
		want := files[s.Path]
		if s.Size == nil || *s.Size != int64(len(want)) ||
			(s.LFS != nil) != lfs(s.Path) || (s.LFS != nil && *s.LFS != sum(want)) {
			t.Errorf("%s: dataset_info(files_metadata=True) describes %s as size %v, LFS %v; "+
				"want %d bytes, LFS %v", what, s.Path, s.Size, s.LFS, len(want), lfs(s.Path))
		}
	}
	if r.RepoInfoSHA != r.SHA {
		t.Errorf("%s: repo_info's sha %s, dataset_info's %s", what, r.RepoInfoSHA, r.SHA)
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sameTree fails unless got holds exactly want's files, byte for byte.
func sameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok || !bytes.Equal(g, w) {
			t.Errorf("%s: %s has %d bytes (present %v), want the %d bytes pushed",
				what, p, len(g), ok, len(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s was not pushed", what, p)
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

// onHub is repo's files at rev on the stand-in.
func onHub(t *testing.T, srv *hubtest.Server, repo, rev string) map[string][]byte {
	t.Helper()
	files, err := srv.Files(repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// huggingface_hub against the stand-in, both ways: create_repo of a
// private dataset (and again with exist_ok), upload_folder of a text file
// inline, a small binary in one PUT and a 2.5 MiB binary in multipart parts
// (the client offers xet, which this Hub does not serve: it answers with an
// LFS transfer, as the Hub does for a repository without xet storage),
// create_tag and list_repo_refs; then dataset_info and repo_info of the
// tag, list_repo_tree across Link-paged answers, snapshot_download and
// hf_hub_download of every file, LFS files through a redirect to storage on
// another origin that must get no token, then on the Hub's own origin.
// Then our client and theirs, each reading what the other pushed.
func TestOfficialPythonClientAgainstStandIn(t *testing.T) {
	t.Parallel()
	srv := hubtest.New(t)
	srv.ChunkSize = 1 << 20
	srv.TreePageSize = 3
	const token = "hf_official_python_8b1e4f"
	srv.AddToken(token, "alice", "write")
	j := newJudge(t, srv, token)

	own := map[string][]byte{
		"README.md":        []byte("# made by the official Python client\n"),
		"notes/a.txt":      []byte("a\n"),
		"notes/deep/b.txt": []byte("b\n"),
		"small.bin":        randomBytes(t, 1000),
		"weights.bin":      randomBytes(t, 5<<19+100),
	}
	dir := t.TempDir()
	writeTree(t, dir, own)
	var p pushed
	j.run(t, token, &p, "push", "alice/made-by-py", dir, "private", "v1")
	if exists, private := srv.Exists("alice/made-by-py"); !exists || !private || p.User != "alice" {
		t.Fatalf("after push (%+v): exists %v, private %v; want the private repository asked",
			p, exists, private)
	}
	if p.AgainURL != p.RepoURL || !strings.HasSuffix(p.RepoURL, "/datasets/alice/made-by-py") {
		t.Errorf("create_repo returned %q, and again with exist_ok %q; want the repository's URL "+
			"both times", p.RepoURL, p.AgainURL)
	}
	want := onHub(t, srv, "alice/made-by-py", "main")
	delete(want, ".gitattributes")
	sameTree(t, "the stand-in after upload_folder", want, own)
	if parts, basic, done := srv.Count("part"), srv.Count("basic"), srv.Count("complete"); parts != 3 ||
		basic != 1 || done != 1 {
		t.Errorf("%d part PUTs, %d single PUTs, %d completions; "+
			"want weights.bin in 3 parts, small.bin in one PUT", parts, basic, done)
	}
	for _, offer := range srv.Offered() {
		if !slices.Contains(offer, "xet") {
			t.Errorf("an LFS batch offered %q; want xet offered (hf_xet is installed) and "+
				"answered with an LFS transfer", offer)
		}
	}
	if n := len(srv.History("alice/made-by-py", "main")); n != 2 || p.AgainCommit != p.Commit {
		t.Errorf("%d commits (want the initial one and the upload), the second upload_folder "+
			"of the same folder returned %s (want %s): it must find every file unchanged",
			n, p.AgainCommit, p.Commit)
	}
	if p.Refs.Tags["v1"] != p.Commit || p.Refs.Branches["main"] != p.Commit {
		t.Errorf("list_repo_refs %+v after create_tag v1 on %s", p.Refs, p.Commit)
	}

	lfs := func(p string) bool { return strings.HasSuffix(p, ".bin") }
	all := withGitAttributes(t, srv, "alice/made-by-py", own)
	for _, storageOnHub := range []bool{false, true} {
		srv.StorageOnHub = storageOnHub
		trees := srv.Count("tree")
		var r read
		j.run(t, token, &r, "read", "alice/made-by-py", "v1", t.TempDir())
		if n := srv.Count("tree") - trees; n < 3 {
			t.Errorf("list_repo_tree read %d pages of /tree, want at least 3 (9 entries, 3 a page)",
				n)
		}
		r.check(t, fmt.Sprintf("huggingface_hub's read (storage on the Hub's origin: %v)",
			storageOnHub), all, lfs)
		if r.SHA != p.Commit || !r.Private {
			t.Errorf("dataset_info of v1: sha %s, private %v; want %s, private", r.SHA,
				r.Private, p.Commit)
		}
	}
	if n := srv.TokensAtStorage(); n != 0 {
		t.Errorf("the storage on another origin received the token %d times", n)
	}

	ds := bakeDataset(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeTree(t, filepath.Dir(tokenFile), map[string][]byte{"token": []byte(token)})
	whestbake(t, "dataset", "upload", ds, "--repo", "alice/gt", "--tag", "v1",
		"--endpoint", srv.URL, "--token-file", tokenFile)
	var r read
	j.run(t, "", &r, "read", "alice/gt", "v1", t.TempDir())
	r.check(t, "huggingface_hub's read of `whestbake dataset upload`",
		onHub(t, srv, "alice/gt", "v1"), isLFSPath)
	if card := string(onHub(t, srv, "alice/gt", "v1")["README.md"]); !strings.Contains(card,
		"alice/gt") {
		t.Errorf("the card on the Hub is not rendered for alice/gt:\n%s", card)
	}
	pushedBack := withGitAttributes(t, srv, "alice/gt", datasettest.ReadTree(t, ds))
	pushedBack["README.md"] = onHub(t, srv, "alice/gt", "v1")["README.md"]
	sameTree(t, "the stand-in after `whestbake dataset upload`", onHub(t, srv, "alice/gt", "v1"),
		pushedBack)

	j.run(t, token, &p, "push", "alice/by-py", ds, "-", "-")
	back := filepath.Join(t.TempDir(), "back")
	whestbake(t, "dataset", "download", "hf://alice/by-py", "--output", back, "--endpoint", srv.URL)
	sameTree(t, "`whestbake dataset download` of huggingface_hub's upload_folder",
		datasettest.ReadTree(t, back),
		withGitAttributes(t, srv, "alice/by-py", datasettest.ReadTree(t, ds)))
	whestbake(t, "dataset", "inspect", back)
}

// isLFSPath is whether the stand-in's .gitattributes sends p through LFS:
// the dataset's parquet, Arrow and figure files.
func isLFSPath(p string) bool {
	for _, ext := range []string{".parquet", ".arrow", ".png"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

// withGitAttributes is files plus the .gitattributes the Hub gave repo.
func withGitAttributes(
	t *testing.T,
	srv *hubtest.Server,
	repo string,
	files map[string][]byte,
) map[string][]byte {
	t.Helper()
	out := map[string][]byte{".gitattributes": onHub(t, srv, repo, "main")[".gitattributes"]}
	for p, d := range files {
		out[p] = d
	}
	return out
}

// bakeDataset bakes a two-split dataset with the whestbake CLI: two
// parquet shards, their prepared Arrow folders, metadata.json, the card
// and the report.
func bakeDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for split, seeds := range map[string]string{"public": "[1, 2, 3]", "holdout": "[4, 5]"} {
		writeTree(t, dir, map[string][]byte{split + ".json": []byte(seeds)})
		whestbake(t, "dataset", "bake",
			"--n-mlps", fmt.Sprint(strings.Count(seeds, ",")+1), "--n-samples", "500",
			"--width", "8", "--depth", "2",
			"--mlp-seeds", at(split+".json"), "--split", split, "-o", at(split))
	}
	whestbake(t, "dataset", "combine-splits", at("public"), at("holdout"), "-o", at("ds"))
	return at("ds")
}

// whestDataset is a two-split dataset whestbench made alone: `whest
// dataset bake` of each split, then `whest dataset combine-splits`, which
// writes its prepared trees with datasets' save_to_disk.
func whestDataset(t *testing.T, j *judge) string {
	t.Helper()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for split, seeds := range map[string]string{"public": "[7, 8]", "holdout": "[9, 10, 11]"} {
		writeTree(t, dir, map[string][]byte{split + ".json": []byte(seeds)})
		j.whest(t, "dataset", "bake",
			"--n-mlps", fmt.Sprint(strings.Count(seeds, ",")+1), "--n-samples", "200",
			"--width", "4", "--depth", "2",
			"--mlp-seeds", at(split+".json"), "--split", split, "--output", at(split))
	}
	j.whest(t, "dataset", "combine-splits", at("public"), at("holdout"), "--output", at("ds"))
	return at("ds")
}

// whest runs `whest ARGS...` against the stand-in with the token and
// returns what it printed.
func (j *judge) whest(t *testing.T, args ...string) string {
	t.Helper()
	return j.env.WhestOK(t, j.cmd(j.token), args...).Stdout
}

// loaded is what official.py load prints: for each split (and each card
// config's split), how the loaded table differs from the pushed parquet
// ("" not at all), and where whestbench's loader read it from.
type loaded struct {
	Whestbench map[string]struct {
		Differs string `json:"differs"`
		Source  string `json:"source"`
		NMLPs   int    `json:"n_mlps"`
	} `json:"whestbench"`
	WhestbenchAll map[string]struct {
		Differs string `json:"differs"`
	} `json:"whestbench_all"`
	Datasets map[string]struct {
		Differs string `json:"differs"`
	} `json:"datasets"`
}

// check fails unless every split of splits (name → n_mlps) loaded, alone
// and all at once, as the pushed rows, through whestbench's prepared-Arrow
// fast path when prepared, and through datasets' card configs (configs:
// config/split keys).
func (l loaded) check(t *testing.T, what string, splits map[string]int, prepared bool,
	configs []string) {
	t.Helper()
	for s, n := range splits {
		got, ok := l.Whestbench[s]
		want := map[bool]string{true: "prepared", false: "parquet"}[prepared]
		if !ok || got.Differs != "" || got.NMLPs != n || got.Source != want {
			t.Errorf("%s: whestbench.load_dataset(split=%q): %+v; want the pushed %d rows, "+
				"read from the %s files", what, s, got, n, want)
		}
		if all, ok := l.WhestbenchAll[s]; len(splits) > 1 && (!ok || all.Differs != "") {
			t.Errorf("%s: whestbench.load_dataset()[%q]: %+v", what, s, all)
		}
	}
	for _, c := range configs {
		if got, ok := l.Datasets[c]; !ok || got.Differs != "" {
			t.Errorf("%s: datasets.load_dataset %s: %+v (loaded %v)", what, c, got, l.Datasets)
		}
	}
	if len(l.Datasets) != len(configs) {
		t.Errorf("%s: datasets.load_dataset loaded %v, want %v", what, l.Datasets, configs)
	}
}

// copyTree copies dir into a new folder: `whest dataset upload` re-renders
// the card of the folder it is given.
func copyTree(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	writeTree(t, out, datasettest.ReadTree(t, dir))
	return out
}

// whestbench's own Hub verbs against the stand-in: `whest dataset upload`
// of a two-split dataset whestbake baked (private, tagged) and of one whest
// baked; `whest dataset info` and `whest dataset download` (whole and one
// split) of each; whestbench.load_dataset of each split (the prepared Arrow
// folders whestbake wrote, which whestbench's loader prefers) and of all
// at once, and datasets.load_dataset of every config the card declares,
// every table equal to the pushed parquet rows; and `whestbake dataset
// download` and `dataset verify` of a two-split dataset whest baked,
// combined and pushed.
func TestWhestbenchAgainstStandIn(t *testing.T) {
	t.Parallel()
	srv := hubtest.New(t)
	srv.TreePageSize = 4
	const token = "hf_whest_verbs_0c7a2d"
	srv.AddToken(token, "alice", "write")
	j := newJudge(t, srv, token)

	ours := copyTree(t, bakeDataset(t))
	j.whest(t, "dataset", "upload", ours, "--repo", "alice/ours", "--tag", "v1", "--private")
	if exists, private := srv.Exists("alice/ours"); !exists || !private ||
		srv.Tags("alice/ours")["v1"] == "" {
		t.Fatalf("after whest dataset upload --private --tag v1: exists %v, private %v, tags %v",
			exists, private, srv.Tags("alice/ours"))
	}
	sameTree(t, "the stand-in after `whest dataset upload`", onHub(t, srv, "alice/ours", "v1"),
		withGitAttributes(t, srv, "alice/ours", datasettest.ReadTree(t, ours)))
	info := j.whest(t, "dataset", "info", "alice/ours", "--revision", "v1")
	for _, want := range []string{"WhestBench dataset (multi-split)", "public:  n_mlps=3",
		"holdout:  n_mlps=2", "width: 8  depth: 2  n_samples: 500"} {
		if !strings.Contains(info, want) {
			t.Errorf("whest dataset info alice/ours printed no %q:\n%s", want, info)
		}
	}
	whole := filepath.Join(t.TempDir(), "whole")
	j.whest(t, "dataset", "download", "alice/ours", "--revision", "v1", "--output", whole)
	got := datasettest.ReadTree(t, whole)
	for p := range got {
		if strings.HasPrefix(p, ".cache/huggingface/") {
			delete(got, p)
		}
	}
	sameTree(t, "`whest dataset download`", got, onHub(t, srv, "alice/ours", "v1"))
	var l loaded
	j.run(t, token, &l, "load", "alice/ours", "v1", ours)
	l.check(t, "alice/ours@v1", map[string]int{"public": 3, "holdout": 2}, true,
		[]string{"default/public", "default/holdout"})

	theirs := whestDataset(t, j)
	j.whest(t, "dataset", "upload", theirs, "--repo", "alice/theirs")
	l = loaded{}
	j.run(t, token, &l, "load", "alice/theirs", "main", theirs)
	l.check(t, "alice/theirs", map[string]int{"public": 2, "holdout": 3}, true,
		[]string{"default/public", "default/holdout"})
	back := filepath.Join(t.TempDir(), "back")
	whestbake(t, "dataset", "download", "hf://alice/theirs", "--output", back,
		"--endpoint", srv.URL)
	sameTree(t, "`whestbake dataset download` of `whest dataset upload`",
		datasettest.ReadTree(t, back),
		withGitAttributes(t, srv, "alice/theirs", datasettest.ReadTree(t, theirs)))
	whestbake(t, "dataset", "verify", back, "--k", "5")
	whestbake(t, "dataset", "inspect", back)
	split := filepath.Join(t.TempDir(), "split")
	j.whest(t, "dataset", "download", "alice/theirs", "--split", "public", "--output", split)
	if _, err := os.Stat(filepath.Join(split, "data", "public-00000-of-00001.parquet")); err != nil {
		t.Errorf("whest dataset download --split public: %v", err)
	}
}
