// Package hubtest is an in-process stand-in of the Hugging Face Hub's HTTP
// API for tests: no Hub is reachable from the test machines. It implements
// the endpoints package hub uses, as the Hub documents them and
// huggingface_hub uses them, and is strict where a lenient fake would hide
// bugs: every API call needs a token (401 without, 403 for a read token or
// another user's namespace), bodies must have the right content type and no
// unknown fields, LFS uploads must match their oid and size, multipart
// completions must list every part with its ETag, storage URLs refuse the
// token, a commit may not reference an LFS object nobody uploaded nor
// carry a binary or LFS-tracked file inline, and a commit whose parent is
// not the branch head is a conflict. It keeps repositories, commits
// (sha, parent, files), branches, tags and the LFS store, and can inject
// failures (an error status, or a part upload that stalls until the client
// goes away) so tests can crash a pusher mid-upload.
//
// Endpoints: GET /api/whoami-v2; POST /api/repos/create;
// GET /api/datasets/{repo}/revision/{rev}; POST /api/datasets/{repo}/paths-info/{rev};
// POST /api/datasets/{repo}/preupload/{rev}; POST /api/datasets/{repo}/commit/{rev};
// GET /api/datasets/{repo}/refs; POST /api/datasets/{repo}/tag/{rev};
// POST /datasets/{repo}.git/info/lfs/objects/batch (basic and multipart
// transfers), and the storage, completion and verify URLs its answers name;
// for downloads, GET /datasets/{repo}/resolve/{rev}/{path} (a regular file
// itself, an LFS file as a redirect to a signed storage URL) and that
// storage URL, both with Range requests. Reads of a public repository need
// no token; a private one answers 401 to an anonymous read.
package hubtest

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is the stand-in Hub.
type Server struct {
	URL string
	// ChunkSize is the multipart transfer's part size: larger LFS objects
	// go in parts of this size when the client offers multipart.
	ChunkSize int64
	// MaxCommitBytes is the largest commit body accepted (413 above it).
	MaxCommitBytes int64

	mu       sync.Mutex
	tokens   map[string]account
	repos    map[string]*repo
	uploads  map[string]*upload
	nextID   int
	counts   map[string]int
	faults   map[string][]int // route → statuses of its next requests
	stalls   map[int]chan struct{}
	cuts     map[string][]int64 // route → body bytes its next answers stop after
	closed   chan struct{}      // ends stalls when the test ends
	onCommit func()
}

type account struct {
	user, role string
	orgs       []string
}

type repo struct {
	private  bool
	branches map[string]string
	tags     map[string]string
	commits  map[string]*Commit
	lfs      map[string][]byte // sha256 → content
}

// Commit is one commit of a repository.
type Commit struct {
	SHA, Parent, Message string
	Files                map[string]Entry
}

// Entry is a file of a commit: inline content, or an LFS object.
type Entry struct {
	LFS  bool
	OID  string // sha256 of an LFS file
	Data []byte // content of a regular file
}

type upload struct {
	repo, oid string
	size      int64
	parts     map[int][]byte
	nParts    int
}

// LFS patterns of the .gitattributes a new dataset repository starts with
// (an excerpt of the Hub's default: binary and data formats).
var lfsPatterns = []string{"*.parquet", "*.arrow", "*.bin", "*.npz", "*.npy", "*.png", "*.jpg", "*.jpeg", "*.gif", "*.zip", "*.gz", "*.tar"}

// lfsThreshold is the size above which the Hub requires LFS.
const lfsThreshold = 10 << 20

// New starts a stand-in on 127.0.0.1, stopped when t ends.
func New(t testing.TB) *Server {
	s := &Server{ChunkSize: 5 << 20, MaxCommitBytes: 64 << 20, tokens: map[string]account{}, repos: map[string]*repo{},
		uploads: map[string]*upload{}, counts: map[string]int{}, faults: map[string][]int{}, stalls: map[int]chan struct{}{},
		cuts: map[string][]int64{}, closed: make(chan struct{})}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(func() {
		close(s.closed)
		srv.Close()
	})
	s.URL = srv.URL
	return s
}

// AddToken lets token act as user; role is "write" or "read"; the user may
// also write to orgs.
func (s *Server) AddToken(token, user, role string, orgs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = account{user, role, orgs}
}

// Fail answers the next len(statuses) requests to route with those
// statuses (routes: whoami, create, revision, paths-info, preupload, batch,
// basic, part, complete, verify, commit, refs, tag).
func (s *Server) Fail(route string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], statuses...)
}

// StallPart makes the next PUT of multipart part n hang until its client
// goes away (a killed pusher); the returned channel closes when it arrives.
func (s *Server) StallPart(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.stalls[n] = ch
	return ch
}

// BeforeNextCommit runs f once, before the next commit is applied (to move
// the branch under a pusher).
func (s *Server) BeforeNextCommit(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCommit = f
}

// Count is how many requests route received.
func (s *Server) Count(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[route]
}

// Exists reports whether repository id exists and whether it is private.
func (s *Server) Exists(id string) (exists, private bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[id]
	return r != nil, r != nil && r.private
}

// History is the commits of branch, newest first.
func (s *Server) History(id, branch string) []Commit {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[id]
	if r == nil {
		return nil
	}
	var out []Commit
	for sha := r.branches[branch]; sha != ""; sha = r.commits[sha].Parent {
		out = append(out, *r.commits[sha])
	}
	return out
}

// Tags is the repository's tags: name → commit.
func (s *Server) Tags(id string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if r := s.repos[id]; r != nil {
		for k, v := range r.tags {
			out[k] = v
		}
	}
	return out
}

// Files is the content of every file at rev (a branch, tag or commit), LFS
// objects resolved.
func (s *Server) Files(id, rev string) (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[id]
	if r == nil {
		return nil, fmt.Errorf("no repository %s", id)
	}
	c := r.resolve(rev)
	if c == nil {
		return nil, fmt.Errorf("no revision %s in %s", rev, id)
	}
	out := map[string][]byte{}
	for p, e := range c.Files {
		if e.LFS {
			out[p] = r.lfs[e.OID]
		} else {
			out[p] = e.Data
		}
	}
	return out, nil
}

// CommitFiles commits files to branch as another client would (the
// branch moves under whoever pushes at the same time).
func (s *Server) CommitFiles(id, branch, message string, files map[string][]byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[id]
	ops := map[string]Entry{}
	for p, d := range files {
		ops[p] = Entry{Data: d}
	}
	return s.apply(r, branch, message, ops)
}

func (r *repo) resolve(rev string) *Commit {
	if sha, ok := r.branches[rev]; ok {
		return r.commits[sha]
	}
	if sha, ok := r.tags[rev]; ok {
		return r.commits[sha]
	}
	return r.commits[rev]
}

// apply makes a commit on branch with the parent's files plus ops (a nil
// Data and !LFS entry deletes). The caller holds s.mu.
func (s *Server) apply(r *repo, branch, message string, ops map[string]Entry) string {
	parent := r.branches[branch]
	files := map[string]Entry{}
	if p := r.commits[parent]; p != nil {
		for k, v := range p.Files {
			files[k] = v
		}
	}
	for k, v := range ops {
		if !v.LFS && v.Data == nil {
			delete(files, k)
		} else {
			files[k] = v
		}
	}
	s.nextID++
	h := sha1.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d", parent, message, s.nextID)
	sha := hex.EncodeToString(h.Sum(nil))
	r.commits[sha] = &Commit{SHA: sha, Parent: parent, Message: message, Files: files}
	r.branches[branch] = sha
	return sha
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern, route string, h func(w http.ResponseWriter, r *http.Request)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.counts[route]++
			var fault int
			if f := s.faults[route]; len(f) > 0 {
				fault, s.faults[route] = f[0], f[1:]
			}
			s.mu.Unlock()
			if fault != 0 {
				fail(w, fault, "injected failure")
				return
			}
			h(w, r)
		})
	}
	handle("GET /api/whoami-v2", "whoami", s.whoami)
	handle("POST /api/repos/create", "create", s.create)
	handle("GET /api/datasets/{owner}/{name}/revision/{rev}", "revision", s.revision)
	handle("POST /api/datasets/{owner}/{name}/paths-info/{rev}", "paths-info", s.pathsInfo)
	handle("POST /api/datasets/{owner}/{name}/preupload/{rev}", "preupload", s.preupload)
	handle("POST /api/datasets/{owner}/{name}/commit/{rev}", "commit", s.commit)
	handle("GET /api/datasets/{owner}/{name}/refs", "refs", s.refs)
	handle("POST /api/datasets/{owner}/{name}/tag/{rev}", "tag", s.tag)
	handle("POST /datasets/{owner}/{git}/info/lfs/objects/batch", "batch", s.batch)
	handle("PUT /storage/{id}", "basic", s.basicPut)
	handle("PUT /storage/{id}/{part}", "part", s.partPut)
	handle("POST /lfs-complete/{id}", "complete", s.complete)
	handle("POST /lfs-verify/{owner}/{name}", "verify", s.verify)
	handle("GET /datasets/{owner}/{name}/resolve/{rev}/{path...}", "resolve", s.resolveFile)
	handle("GET /lfs-files/{oid}", "lfs-file", s.lfsFile)
	return mux
}

func fail(w http.ResponseWriter, status int, format string, a ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(format, a...)})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body strictly: the content type, no unknown fields,
// nothing after the value.
func decode(w http.ResponseWriter, r *http.Request, contentType string, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, contentType) {
		fail(w, http.StatusBadRequest, "Content-Type is %q, want %s", ct, contentType)
		return false
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "malformed JSON body: %v", err)
		return false
	}
	if dec.More() {
		fail(w, http.StatusBadRequest, "malformed JSON body: data after the value")
		return false
	}
	return true
}

// caller authenticates the request: 401 without a known token.
func (s *Server) caller(w http.ResponseWriter, r *http.Request) (account, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	a, known := s.tokens[tok]
	s.mu.Unlock()
	if !ok || !known {
		fail(w, http.StatusUnauthorized, "Invalid credentials in Authorization header")
		return account{}, false
	}
	return a, true
}

// repoFor authenticates the caller and finds the repository of the path:
// 404 for one that does not exist or that the caller may not see, 403 when
// write is asked of a read token or of another namespace. A read without an
// Authorization header is anonymous (see anonymous); one with a header
// needs a known token, as on the Hub. The caller holds
// nothing; on success s.mu is held and must be released.
func (s *Server) repoFor(w http.ResponseWriter, r *http.Request, owner, name string, write bool) (*repo, bool) {
	if !write && r.Header.Get("Authorization") == "" {
		return s.anonymous(w, owner, name)
	}
	a, ok := s.caller(w, r)
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	rp := s.repos[owner+"/"+name]
	mine := a.user == owner || contains(a.orgs, owner)
	if rp == nil || (rp.private && !mine) {
		s.mu.Unlock()
		fail(w, http.StatusNotFound, "Repository not found")
		return nil, false
	}
	if write && (a.role != "write" || !mine) {
		s.mu.Unlock()
		fail(w, http.StatusForbidden, "You don't have the rights to write to %s/%s", owner, name)
		return nil, false
	}
	return rp, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	a, ok := s.caller(w, r)
	if !ok {
		return
	}
	orgs := []map[string]string{}
	for _, o := range a.orgs {
		orgs = append(orgs, map[string]string{"name": o})
	}
	reply(w, map[string]any{"type": "user", "name": a.user, "orgs": orgs,
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{"displayName": "test", "role": a.role}}})
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	a, ok := s.caller(w, r)
	if !ok {
		return
	}
	var in struct {
		Type         string `json:"type"`
		Name         string `json:"name"`
		Organization string `json:"organization"`
		Private      bool   `json:"private"`
	}
	if !decode(w, r, "application/json", &in) {
		return
	}
	owner := in.Organization
	if owner == "" {
		owner = a.user
	}
	switch {
	case in.Type != "dataset":
		fail(w, http.StatusBadRequest, "type %q: this stand-in serves dataset repositories only", in.Type)
		return
	case !nameRE.MatchString(in.Name) || !nameRE.MatchString(owner):
		fail(w, http.StatusBadRequest, "invalid repository name %s/%s", owner, in.Name)
		return
	case a.role != "write" || (owner != a.user && !contains(a.orgs, owner)):
		fail(w, http.StatusForbidden, "You don't have the rights to create a repository under the namespace %q", owner)
		return
	}
	id := owner + "/" + in.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repos[id] != nil {
		fail(w, http.StatusConflict, "You already created this dataset repo")
		return
	}
	rp := &repo{private: in.Private, branches: map[string]string{}, tags: map[string]string{}, commits: map[string]*Commit{}, lfs: map[string][]byte{}}
	s.repos[id] = rp
	var ga strings.Builder
	for _, p := range lfsPatterns {
		fmt.Fprintf(&ga, "%s filter=lfs diff=lfs merge=lfs -text\n", p)
	}
	s.apply(rp, "main", "initial commit", map[string]Entry{".gitattributes": {Data: []byte(ga.String())}})
	reply(w, map[string]string{"url": s.URL + "/datasets/" + id, "name": id})
}

func (s *Server) revision(w http.ResponseWriter, r *http.Request) {
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), false)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	c := rp.resolve(r.PathValue("rev"))
	if c == nil {
		fail(w, http.StatusNotFound, "Revision Not Found for url %s", r.URL.Path)
		return
	}
	siblings := []map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(c.Files)) {
		siblings = append(siblings, map[string]string{"rfilename": p})
	}
	reply(w, map[string]any{"id": r.PathValue("owner") + "/" + r.PathValue("name"), "sha": c.SHA, "private": rp.private, "siblings": siblings})
}

func (s *Server) pathsInfo(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		fail(w, http.StatusBadRequest, "Content-Type is %q, want application/x-www-form-urlencoded", ct)
		return
	}
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "malformed form: %v", err)
		return
	}
	for k := range r.PostForm {
		if k != "paths" && k != "expand" {
			fail(w, http.StatusBadRequest, "unknown form field %q", k)
			return
		}
	}
	paths := r.PostForm["paths"]
	if len(paths) == 0 {
		fail(w, http.StatusBadRequest, "paths is required")
		return
	}
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), false)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	c := rp.resolve(r.PathValue("rev"))
	if c == nil {
		fail(w, http.StatusNotFound, "Revision Not Found")
		return
	}
	out := []map[string]any{}
	for _, p := range paths {
		e, ok := c.Files[p]
		if !ok {
			continue
		}
		item := map[string]any{"type": "file", "path": p}
		if e.LFS {
			size := int64(len(rp.lfs[e.OID]))
			pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", e.OID, size)
			item["size"], item["oid"] = size, gitBlob([]byte(pointer))
			item["lfs"] = map[string]any{"oid": e.OID, "size": size, "pointerSize": len(pointer)}
		} else {
			item["size"], item["oid"] = len(e.Data), gitBlob(e.Data)
		}
		out = append(out, item)
	}
	reply(w, out)
}

func gitBlob(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// isLFS is the Hub's rule: tracked by .gitattributes, too large, or binary.
func isLFS(p string, size int64, sample []byte) bool {
	for _, pat := range lfsPatterns {
		if ok, _ := path.Match(pat, path.Base(p)); ok {
			return true
		}
	}
	return size >= lfsThreshold || bytes.IndexByte(sample, 0) >= 0
}

func validPath(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../") && !strings.HasPrefix(p, ".git/")
}

func (s *Server) preupload(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Files []struct {
			Path   string `json:"path"`
			Sample string `json:"sample"`
			Size   *int64 `json:"size"`
		} `json:"files"`
	}
	if !decode(w, r, "application/json", &in) {
		return
	}
	type fileOut struct {
		Path         string `json:"path"`
		UploadMode   string `json:"uploadMode"`
		ShouldIgnore bool   `json:"shouldIgnore"`
	}
	var out []fileOut
	for _, f := range in.Files {
		sample, err := base64.StdEncoding.DecodeString(f.Sample)
		switch {
		case !validPath(f.Path):
			fail(w, http.StatusBadRequest, "invalid path %q", f.Path)
			return
		case err != nil || len(sample) > 512:
			fail(w, http.StatusBadRequest, "sample of %s must be at most 512 bytes in base64", f.Path)
			return
		case f.Size == nil || *f.Size < 0:
			fail(w, http.StatusBadRequest, "size of %s is missing or negative", f.Path)
			return
		}
		mode := "regular"
		if isLFS(f.Path, *f.Size, sample) {
			mode = "lfs"
		}
		out = append(out, fileOut{f.Path, mode, false})
	}
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	if rp.branches[r.PathValue("rev")] == "" {
		fail(w, http.StatusNotFound, "Revision Not Found")
		return
	}
	reply(w, map[string]any{"files": out, "commitOid": rp.branches[r.PathValue("rev")]})
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request) {
	git := r.PathValue("git")
	name, ok := strings.CutSuffix(git, ".git")
	if !ok {
		fail(w, http.StatusNotFound, "not a git endpoint")
		return
	}
	if a := r.Header.Get("Accept"); !strings.HasPrefix(a, "application/vnd.git-lfs+json") {
		fail(w, http.StatusNotAcceptable, "Accept is %q, want application/vnd.git-lfs+json", a)
		return
	}
	var in struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		Objects   []struct {
			OID  string `json:"oid"`
			Size *int64 `json:"size"`
		} `json:"objects"`
		HashAlgo string `json:"hash_algo"`
		Ref      *struct {
			Name string `json:"name"`
		} `json:"ref"`
	}
	if !decode(w, r, "application/vnd.git-lfs+json", &in) {
		return
	}
	switch {
	case in.Operation != "upload":
		fail(w, http.StatusBadRequest, "operation %q: this stand-in takes upload", in.Operation)
		return
	case in.HashAlgo != "" && in.HashAlgo != "sha256":
		fail(w, http.StatusConflict, "hash_algo %q: only sha256", in.HashAlgo)
		return
	case !contains(in.Transfers, "basic") && !contains(in.Transfers, "multipart"):
		fail(w, http.StatusBadRequest, "transfers %v: offer basic or multipart", in.Transfers)
		return
	case len(in.Objects) == 0:
		fail(w, http.StatusBadRequest, "objects is empty")
		return
	}
	for _, o := range in.Objects {
		if !isSHA256(o.OID) || o.Size == nil || *o.Size < 0 {
			fail(w, http.StatusUnprocessableEntity, "object %q: oid must be 64 lowercase hex digits and size a non-negative number", o.OID)
			return
		}
	}
	owner := r.PathValue("owner")
	rp, ok := s.repoFor(w, r, owner, name, true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	multipart := contains(in.Transfers, "multipart")
	transfer := "basic"
	if multipart {
		transfer = "multipart"
	}
	var objs []map[string]any
	for _, o := range in.Objects {
		obj := map[string]any{"oid": o.OID, "size": *o.Size, "authenticated": true}
		if d, ok := rp.lfs[o.OID]; ok && int64(len(d)) == *o.Size {
			objs = append(objs, obj) // stored already: no actions
			continue
		}
		s.nextID++
		id := strconv.Itoa(s.nextID)
		up := &upload{repo: owner + "/" + name, oid: o.OID, size: *o.Size, parts: map[int][]byte{}}
		s.uploads[id] = up
		upAction := map[string]any{"href": s.URL + "/storage/" + id, "header": map[string]string{}}
		if multipart && *o.Size > s.ChunkSize {
			up.nParts = int((*o.Size + s.ChunkSize - 1) / s.ChunkSize)
			h := map[string]string{"chunk_size": strconv.FormatInt(s.ChunkSize, 10)}
			for n := 1; n <= up.nParts; n++ {
				h[fmt.Sprintf("%05d", n)] = fmt.Sprintf("%s/storage/%s/%d", s.URL, id, n)
			}
			upAction = map[string]any{"href": s.URL + "/lfs-complete/" + id, "header": h}
		}
		obj["actions"] = map[string]any{"upload": upAction,
			"verify": map[string]any{"href": s.URL + "/lfs-verify/" + owner + "/" + name, "header": map[string]string{}}}
		objs = append(objs, obj)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	_ = json.NewEncoder(w).Encode(map[string]any{"transfer": transfer, "objects": objs, "hash_algo": "sha256"})
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// storage refuses the Hub token: presigned URLs carry their own authority,
// and a client that sends its token there leaks it to the storage host.
func storage(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		fail(w, http.StatusBadRequest, "storage URLs are presigned: an Authorization header is refused (it would leak the Hub token)")
		return false
	}
	return true
}

func (s *Server) basicPut(w http.ResponseWriter, r *http.Request) {
	if !storage(w, r) {
		return
	}
	s.mu.Lock()
	up := s.uploads[r.PathValue("id")]
	s.mu.Unlock()
	if up == nil || up.nParts != 0 {
		fail(w, http.StatusNotFound, "no such upload")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, up.size+1))
	if err != nil {
		return // the client went away
	}
	if sum := sha256.Sum256(data); int64(len(data)) != up.size || hex.EncodeToString(sum[:]) != up.oid {
		fail(w, http.StatusBadRequest, "content does not match oid %s and size %d", up.oid, up.size)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[up.repo].lfs[up.oid] = data
	delete(s.uploads, r.PathValue("id"))
}

func (s *Server) partPut(w http.ResponseWriter, r *http.Request) {
	if !storage(w, r) {
		return
	}
	n, err := strconv.Atoi(r.PathValue("part"))
	s.mu.Lock()
	up := s.uploads[r.PathValue("id")]
	stall := s.stalls[n]
	delete(s.stalls, n)
	s.mu.Unlock()
	if err != nil || up == nil || n < 1 || n > up.nParts {
		fail(w, http.StatusNotFound, "no such upload part")
		return
	}
	if stall != nil {
		// The server notices a client that went away only once the body
		// is read: read it, keep the answer back until the client dies.
		_, _ = io.Copy(io.Discard, r.Body)
		close(stall)
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	want := min(s.ChunkSize, up.size-int64(n-1)*s.ChunkSize)
	if r.ContentLength != want {
		fail(w, http.StatusBadRequest, "part %d must be %d bytes with a Content-Length, got %d", n, want, r.ContentLength)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, want+1))
	if err != nil || int64(len(data)) != want {
		fail(w, http.StatusBadRequest, "part %d: read %d of %d bytes", n, len(data), want)
		return
	}
	s.mu.Lock()
	up.parts[n] = data
	s.mu.Unlock()
	sum := md5.Sum(data)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	var in struct {
		OID   string `json:"oid"`
		Parts []struct {
			PartNumber int    `json:"partNumber"`
			ETag       string `json:"etag"`
		} `json:"parts"`
	}
	if !decode(w, r, "application/vnd.git-lfs+json", &in) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	up := s.uploads[id]
	switch {
	case up == nil || up.nParts == 0:
		fail(w, http.StatusNotFound, "no such multipart upload")
		return
	case in.OID != up.oid:
		fail(w, http.StatusBadRequest, "oid %s is not this upload's (%s)", in.OID, up.oid)
		return
	case len(in.Parts) != up.nParts:
		fail(w, http.StatusBadRequest, "%d parts listed, the upload has %d", len(in.Parts), up.nParts)
		return
	}
	var all []byte
	for i, p := range in.Parts {
		data, ok := up.parts[p.PartNumber]
		sum := md5.Sum(data)
		if p.PartNumber != i+1 || !ok || p.ETag != `"`+hex.EncodeToString(sum[:])+`"` {
			fail(w, http.StatusBadRequest, "part %d: missing, out of order, or ETag %s does not match the uploaded part", p.PartNumber, p.ETag)
			return
		}
		all = append(all, data...)
	}
	if sum := sha256.Sum256(all); int64(len(all)) != up.size || hex.EncodeToString(sum[:]) != up.oid {
		fail(w, http.StatusBadRequest, "assembled parts do not match oid %s and size %d", up.oid, up.size)
		return
	}
	s.repos[up.repo].lfs[up.oid] = all
	delete(s.uploads, id)
	reply(w, map[string]string{"message": "ok"})
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	var in struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	if !decode(w, r, "application/vnd.git-lfs+json", &in) {
		return
	}
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	if d, ok := rp.lfs[in.OID]; !ok || int64(len(d)) != in.Size {
		fail(w, http.StatusNotFound, "object %s of %d bytes was not uploaded", in.OID, in.Size)
		return
	}
	reply(w, map[string]string{"message": "ok"})
}

// strictLine decodes one NDJSON value with no unknown fields.
func strictLine(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the value")
	}
	return nil
}

func (s *Server) commit(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		fail(w, http.StatusBadRequest, "Content-Type is %q, want application/x-ndjson", ct)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.MaxCommitBytes+1))
	if err != nil {
		return // the client went away: nothing is committed
	}
	if int64(len(body)) > s.MaxCommitBytes {
		fail(w, http.StatusRequestEntityTooLarge, "commit payload over %d bytes", s.MaxCommitBytes)
		return
	}
	type line struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	var header struct {
		Summary      string `json:"summary"`
		Description  string `json:"description"`
		ParentCommit string `json:"parentCommit"`
	}
	type lfsFile struct {
		Path string `json:"path"`
		Algo string `json:"algo"`
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	type file struct {
		Path     string `json:"path"`
		Encoding string `json:"encoding"`
		Content  string `json:"content"`
	}
	var files []file
	var lfsFiles []lfsFile
	var deleted []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, int(s.MaxCommitBytes)+1)
	for i := 0; sc.Scan(); i++ {
		var l line
		if err := strictLine(sc.Bytes(), &l); err != nil {
			fail(w, http.StatusBadRequest, "line %d: malformed NDJSON: %v", i+1, err)
			return
		}
		if (i == 0) != (l.Key == "header") {
			fail(w, http.StatusBadRequest, "line %d: the header must be the first line, and only it", i+1)
			return
		}
		var err error
		switch l.Key {
		case "header":
			err = strictLine(l.Value, &header)
		case "file":
			var f file
			if err = strictLine(l.Value, &f); err == nil {
				files = append(files, f)
			}
		case "lfsFile":
			var f lfsFile
			if err = strictLine(l.Value, &f); err == nil {
				lfsFiles = append(lfsFiles, f)
			}
		case "deletedFile":
			var f struct {
				Path string `json:"path"`
			}
			if err = strictLine(l.Value, &f); err == nil {
				deleted = append(deleted, f.Path)
			}
		default:
			err = fmt.Errorf("unknown key %q", l.Key)
		}
		if err != nil {
			fail(w, http.StatusBadRequest, "line %d (%s): %v", i+1, l.Key, err)
			return
		}
	}
	if err := sc.Err(); err != nil {
		fail(w, http.StatusBadRequest, "malformed NDJSON: %v", err)
		return
	}
	if header.Summary == "" {
		fail(w, http.StatusBadRequest, "the header's summary (the commit message) is required")
		return
	}
	if len(files)+len(lfsFiles)+len(deleted) == 0 {
		fail(w, http.StatusBadRequest, "no operations: nothing to commit")
		return
	}
	s.mu.Lock()
	hook := s.onCommit
	s.onCommit = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	branch := r.PathValue("rev")
	head, ok := rp.branches[branch]
	if !ok {
		fail(w, http.StatusNotFound, "Invalid rev id: %s (commits go to an existing branch)", branch)
		return
	}
	if header.ParentCommit != "" && header.ParentCommit != head {
		fail(w, http.StatusConflict, "A commit has happened since. Please refresh and try again.")
		return
	}
	ops := map[string]Entry{}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := base64.StdEncoding.DecodeString(f.Content)
		switch {
		case !validPath(f.Path) || seen[f.Path]:
			fail(w, http.StatusBadRequest, "invalid or repeated path %q", f.Path)
			return
		case f.Encoding != "base64" || err != nil:
			fail(w, http.StatusBadRequest, "%s: content must be base64 with encoding base64", f.Path)
			return
		case isLFS(f.Path, int64(len(data)), data[:min(len(data), 512)]):
			fail(w, http.StatusBadRequest, "Your push was rejected because it contains binary or LFS-tracked files (%s) sent as regular files: use LFS", f.Path)
			return
		}
		seen[f.Path] = true
		ops[f.Path] = Entry{Data: data}
	}
	for _, f := range lfsFiles {
		d, stored := rp.lfs[f.OID]
		switch {
		case !validPath(f.Path) || seen[f.Path]:
			fail(w, http.StatusBadRequest, "invalid or repeated path %q", f.Path)
			return
		case f.Algo != "sha256" || !isSHA256(f.OID):
			fail(w, http.StatusBadRequest, "%s: algo must be sha256 and oid 64 hex digits", f.Path)
			return
		case !stored || int64(len(d)) != f.Size:
			fail(w, http.StatusUnprocessableEntity, "Your push was rejected because an LFS pointer (%s, oid %s, %d bytes) points to a file that was not uploaded", f.Path, f.OID, f.Size)
			return
		}
		seen[f.Path] = true
		ops[f.Path] = Entry{LFS: true, OID: f.OID}
	}
	for _, p := range deleted {
		if _, ok := rp.commits[head].Files[p]; !ok || seen[p] {
			fail(w, http.StatusNotFound, "cannot delete %s: no such file at %s, or written in the same commit", p, head)
			return
		}
		seen[p] = true
		ops[p] = Entry{}
	}
	sha := s.apply(rp, branch, header.Summary, ops)
	id := r.PathValue("owner") + "/" + r.PathValue("name")
	reply(w, map[string]any{"success": true, "commitOid": sha, "commitUrl": s.URL + "/datasets/" + id + "/commit/" + sha, "pullRequestUrl": nil})
}

func (s *Server) refs(w http.ResponseWriter, r *http.Request) {
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), false)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	list := func(m map[string]string, kind string) []map[string]string {
		out := []map[string]string{}
		for k, v := range m {
			out = append(out, map[string]string{"name": k, "ref": "refs/" + kind + "/" + k, "targetCommit": v})
		}
		sort.Slice(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
		return out
	}
	reply(w, map[string]any{"branches": list(rp.branches, "heads"), "tags": list(rp.tags, "tags"), "converts": []any{}})
}

func (s *Server) tag(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Tag     string `json:"tag"`
		Message string `json:"message"`
	}
	if !decode(w, r, "application/json", &in) {
		return
	}
	if !nameRE.MatchString(in.Tag) {
		fail(w, http.StatusBadRequest, "invalid tag %q", in.Tag)
		return
	}
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	c := rp.resolve(r.PathValue("rev"))
	switch {
	case c == nil:
		fail(w, http.StatusNotFound, "Revision Not Found")
	case rp.tags[in.Tag] != "":
		fail(w, http.StatusConflict, "Tag reference %s already exists", in.Tag)
	default:
		rp.tags[in.Tag] = c.SHA
		reply(w, map[string]string{"message": "ok"})
	}
}
