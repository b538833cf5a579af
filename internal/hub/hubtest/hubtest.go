// Package hubtest is an in-process stand-in of the Hugging Face Hub's HTTP
// API for tests: no Hub is reachable from the test machines. It is ours,
// not the Hub's: it implements the endpoints that package hub and the
// official clients huggingface_hub and @huggingface/hub call, the way the
// Hub answers them, and both official clients are run against it to judge
// it, in internal/hub/hubjs and internal/hub/hubpy. It is strict where a
// lenient fake would hide bugs: every API call needs a token, with 401
// without one and 403 for a read token or another user's namespace; bodies
// must have the right content type and no unknown fields, LFS uploads must
// match their oid and size, multipart completions must list every part with
// its ETag, storage on another origin refuses the token, a commit may not
// reference an LFS object nobody uploaded nor carry a binary or LFS-tracked
// file inline, and a commit whose parent is not the branch head is refused
// with 412.
//
// It keeps repositories, commits with their sha, parent and files,
// branches, tags and the LFS store, and behaves as the Hub does where a
// client can go wrong: the revision's "siblings" may be truncated,
// TruncateSiblings, while the /tree listing is complete and paged with a
// Link header, TreePageSize; a renamed repository, or one named in another
// case, answers 307 to its current name, POSTs included, Rename; a rate
// limit answers 429 with a RateLimit header and no Retry-After, RateLimit;
// LFS storage lives on another origin, StorageURL, unless StorageOnHub; an
// anonymous read of a missing or private repository answers 401 with
// RepoNotFound, as the Hub does not tell them apart. Faults can be
// injected: an error status with Fail, a part upload that stalls until its
// client goes away with StallPart, a request or answer body that stops
// moving with Hang or crawls with Throttle, an answer cut mid-body with
// CutNext.
//
// docs/HUB.md lists the endpoints with the client functions they serve.
package hubtest

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the stand-in Hub.
type Server struct {
	// URL is the Hub's origin, StorageURL the LFS storage's: another
	// origin, as the Hub's storage is on a CDN or S3.
	URL, StorageURL string
	// ChunkSize is the multipart transfer's part size: larger LFS objects
	// go in parts of this size when the client offers multipart.
	ChunkSize int64
	// MaxCommitBytes is the largest commit body accepted; above it is a 413.
	MaxCommitBytes int64
	// TreePageSize is how many entries one page of /tree lists; the
	// next page is named by the Link header.
	TreePageSize int
	// StorageOnHub hands out storage URLs on the Hub's own origin, where
	// the token is no leak and is accepted.
	StorageOnHub bool

	mu              sync.Mutex
	tokens          map[string]account
	repos           map[string]*repo  // by current id
	renamed         map[string]string // a former id → the current one
	orgPrivate      map[string]bool   // namespaces whose new repositories are private by default
	siblings        int               // entries the revision's siblings list shows; -1 all
	uploads         map[string]*upload
	nextID          int
	counts          map[string]int
	faults          map[string][]int // route → statuses of its next requests
	stalls          map[int]chan struct{}
	cuts            map[string][]int64 // route → body bytes its next answers stop after
	hangs           map[string]int64   // route → body bytes after which its requests hang
	throttles       map[string]int64   // route → bytes a second its bodies move at
	limits          map[string]time.Time
	limited         map[string]int
	ranges          map[string][]string
	offered         [][]string // the transfers of each LFS batch request
	tokensAtStorage int
	closed          chan struct{} // ends stalls and hangs when the test ends
	onCommit        func()
}

// account is what a token may do. A fine-grained token writes to the
// repositories it names and creates none.
type account struct {
	user, role string
	orgs       []string
	repos      []string
}

type repo struct {
	id       string
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

// LFS patterns of the .gitattributes a new dataset repository starts with:
// an excerpt of the Hub's default, binary and data formats.
var lfsPatterns = []string{
	"*.parquet", "*.arrow", "*.bin", "*.npz", "*.npy", "*.png",
	"*.jpg", "*.jpeg", "*.gif", "*.zip", "*.gz", "*.tar",
}

// lfsThreshold is the size above which the Hub requires LFS.
const lfsThreshold = 10 << 20

// New starts a stand-in on 127.0.0.1, the Hub and its storage on two
// ports, stopped when t ends.
func New(t testing.TB) *Server {
	s := &Server{
		ChunkSize:      5 << 20,
		MaxCommitBytes: 64 << 20,
		TreePageSize:   1000,
		siblings:       -1,
		tokens:         map[string]account{},
		repos:          map[string]*repo{},
		renamed:        map[string]string{},
		orgPrivate:     map[string]bool{},
		uploads:        map[string]*upload{},
		counts:         map[string]int{},
		faults:         map[string][]int{},
		stalls:         map[int]chan struct{}{},
		cuts:           map[string][]int64{},
		hangs:          map[string]int64{},
		throttles:      map[string]int64{},
		limits:         map[string]time.Time{},
		limited:        map[string]int{},
		ranges:         map[string][]string{},
		closed:         make(chan struct{}),
	}
	hub := httptest.NewServer(s.routes())
	storage := httptest.NewServer(s.storageRoutes(http.NewServeMux(), false))
	t.Cleanup(func() {
		close(s.closed)
		hub.Close()
		storage.Close()
	})
	s.URL = hub.URL
	s.StorageURL = storage.URL
	return s
}

// AddToken lets token act as user; role is "write" or "read"; the user may
// also write to orgs.
func (s *Server) AddToken(token, user, role string, orgs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = account{user: user, role: role, orgs: orgs}
}

// AddRepoToken makes token a fine-grained token of user that may read and
// write existing repos, and nothing else: it creates none.
func (s *Server) AddRepoToken(token, user string, repos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = account{user: user, role: "fineGrained", repos: repos}
}

// OrgDefaultPrivate makes the repositories created in namespace without a
// visibility private, as an organisation's setting does.
func (s *Server) OrgDefaultPrivate(namespace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgPrivate[namespace] = true
}

// Count is how many requests route received.
func (s *Server) Count(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[route]
}

// Ranges is the Range headers route's requests carried, in order.
func (s *Server) Ranges(route string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ranges[route])
}

// Offered is the transfers each LFS batch request offered, in order. The
// stand-in serves basic and multipart only and answers an offer of xet with
// one of them, as the Hub does for a repository without Xet storage.
func (s *Server) Offered() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.offered)
}

// TokensAtStorage is how many requests brought a token to the storage on
// another origin. Each was refused.
func (s *Server) TokensAtStorage() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokensAtStorage
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

// Files is the content of every file at rev, a branch, tag or commit, LFS
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

// CommitFiles commits files to branch as another client would, so the
// branch moves under whoever pushes at the same time. Paths are not
// checked: a test may plant what no Hub should hold.
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

// Rename gives repository from the id to, as the Hub's settings do: the
// Hub then answers requests naming from with a 307 to to.
func (s *Server) Rename(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[from]
	delete(s.repos, from)
	r.id = to
	s.repos[to] = r
	s.renamed[strings.ToLower(from)] = to
}

// TruncateSiblings makes the revision endpoint list at most n of a
// revision's files in "siblings", none for 0, as the Hub does for large
// repositories; /tree still lists them all.
func (s *Server) TruncateSiblings(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.siblings = n
}

func (r *repo) resolve(rev string) *Commit {
	if rev == "HEAD" { // the default branch, as the Hub resolves it
		rev = "main"
	}
	if sha, ok := r.branches[rev]; ok {
		return r.commits[sha]
	}
	if sha, ok := r.tags[rev]; ok {
		return r.commits[sha]
	}
	return r.commits[rev]
}

// apply makes a commit on branch with the parent's files plus ops; an
// entry with nil Data and !LFS deletes. The caller holds s.mu.
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
	r.commits[sha] = &Commit{
		SHA:     sha,
		Parent:  parent,
		Message: message,
		Files:   files,
	}
	r.branches[branch] = sha
	return sha
}

// handler is a route's own code; the middleware runs before it: counts,
// faults, renames, rate limits, hangs.
type handler func(w http.ResponseWriter, r *http.Request)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern, route string, h handler) {
		mux.HandleFunc(pattern, s.middleware(route, h))
	}
	handle("GET /api/whoami-v2", "whoami", s.whoami)
	handle("POST /api/repos/create", "create", s.create)
	handle("POST /api/validate-yaml", "validate-yaml", s.validateYAML)
	handle("GET /api/datasets/{owner}/{name}", "info", s.info)
	handle("GET /api/datasets/{owner}/{name}/revision/{rev}", "revision", s.info)
	handle("GET /api/datasets/{owner}/{name}/tree/{rev}", "tree", s.tree)
	handle("GET /api/datasets/{owner}/{name}/tree/{rev}/{path...}", "tree", s.tree)
	handle("POST /api/datasets/{owner}/{name}/paths-info/{rev}", "paths-info", s.pathsInfo)
	handle("POST /api/datasets/{owner}/{name}/preupload/{rev}", "preupload", s.preupload)
	handle("POST /api/datasets/{owner}/{name}/commit/{rev}", "commit", s.commit)
	handle("GET /api/datasets/{owner}/{name}/refs", "refs", s.refs)
	handle("POST /api/datasets/{owner}/{name}/tag/{rev}", "tag", s.tag)
	handle("POST /datasets/{owner}/{git}/info/lfs/objects/batch", "batch", s.batch)
	handle("POST /lfs-complete/{id}", "complete", s.complete)
	handle("POST /lfs-verify/{owner}/{name}", "verify", s.verify)
	handle("GET /datasets/{owner}/{name}/resolve/{rev}/{path...}", "resolve", s.resolveFile)
	handle("GET /datasets/{owner}/{name}/raw/{rev}/{path...}", "raw", s.rawFile)
	return s.storageRoutes(mux, true)
}

// storageRoutes adds the LFS storage's routes to mux: on the Hub's own
// origin, onHub, a token is no leak, on another origin it is refused.
func (s *Server) storageRoutes(mux *http.ServeMux, onHub bool) *http.ServeMux {
	handle := func(pattern, route string, h handler) {
		mux.HandleFunc(pattern, s.middleware(route, func(w http.ResponseWriter, r *http.Request) {
			if !onHub && r.Header.Get("Authorization") != "" {
				s.mu.Lock()
				s.tokensAtStorage++
				s.mu.Unlock()
				fail(w, http.StatusBadRequest, "storage URLs are presigned: "+
					"an Authorization header is refused (it would leak the Hub token)")
				return
			}
			h(w, r)
		}))
	}
	handle("PUT /storage/{id}", "basic", s.basicPut)
	handle("PUT /storage/{id}/{part}", "part", s.partPut)
	handle("GET /lfs-files/{oid}", "lfs-file", s.lfsFile)
	return mux
}

// storageBase is where the storage URLs handed out point.
func (s *Server) storageBase() string {
	if s.StorageOnHub {
		return s.URL
	}
	return s.StorageURL
}

// middleware counts a route's requests and applies, in order, an injected
// failure, a rate limit, a renamed repository's redirect, a hang and a
// throttle.
func (s *Server) middleware(route string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[route]++
		var fault int
		if f := s.faults[route]; len(f) > 0 {
			fault, s.faults[route] = f[0], f[1:]
		}
		wait := time.Until(s.limits[route])
		if wait > 0 {
			s.limited[route]++
		}
		hang, hung := s.hangs[route]
		rate := s.throttles[route]
		s.mu.Unlock()
		switch {
		case fault != 0:
			fail(w, fault, "injected failure")
			return
		case wait > 0:
			// The Hub's rate limit: the wait in RateLimit's t=, seconds
			// to the window's reset, and no Retry-After.
			reset := int(math.Ceil(wait.Seconds()))
			w.Header().Set("RateLimit", fmt.Sprintf(`"api";r=0;t=%d`, reset))
			w.Header().Set("RateLimit-Policy", `"fixed window";"api";q=500;w=300`)
			fail(w, http.StatusTooManyRequests, "You have been rate-limited")
			return
		case s.redirectRenamed(w, r):
			return
		case hung && r.Method != http.MethodGet:
			// The server stops reading the body: the client's writes
			// block once the connection's buffers are full.
			_, _ = io.CopyN(io.Discard, r.Body, hang)
			s.hold(r)
			return
		}
		if rate > 0 {
			r.Body = &slowBody{body: r.Body, rate: rate}
		}
		h(w, r)
	}
}

// hold keeps a request unanswered until its client goes away or the test
// ends.
func (s *Server) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closed:
	}
}

// redirectRenamed answers a request that names a repository by a former
// id, or by its id in another case, with a 307 to the same path under its
// current id, a relative Location as the Hub sends, and reports whether
// it did.
func (s *Server) redirectRenamed(w http.ResponseWriter, r *http.Request) bool {
	owner := r.PathValue("owner")
	name := r.PathValue("name")
	suffix := ""
	if git := r.PathValue("git"); git != "" {
		name = strings.TrimSuffix(git, ".git")
		suffix = ".git"
	}
	if owner == "" || name == "" {
		return false
	}
	id := owner + "/" + name
	current := s.currentID(id)
	if current == "" || current == id {
		return false
	}
	newOwner, newName, _ := strings.Cut(current, "/")
	segs := strings.Split(r.URL.EscapedPath(), "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == owner && segs[i+1] == name+suffix {
			segs[i], segs[i+1] = newOwner, newName+suffix
			break
		}
	}
	loc := strings.Join(segs, "/")
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusTemporaryRedirect)
	return true
}

// currentID is the id of the repository id names, by its id, a former id,
// or either in another case, or "".
func (s *Server) currentID(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repos[id] != nil {
		return id
	}
	if to, ok := s.renamed[strings.ToLower(id)]; ok {
		return to
	}
	for k := range s.repos {
		if strings.EqualFold(k, id) {
			return k
		}
	}
	return ""
}

// fail answers status with the Hub's JSON error body.
func fail(w http.ResponseWriter, status int, format string, a ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(format, a...)})
}

// failCode is fail with the Hub's X-Error-Code, which clients branch on:
// RepoNotFound, RevisionNotFound, EntryNotFound.
func failCode(w http.ResponseWriter, status int, code, format string, a ...any) {
	w.Header().Set("X-Error-Code", code)
	fail(w, status, format, a...)
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

// invalidCredentials is the Hub's message for a token it does not know;
// clients tell it from a 401 that hides a missing or private repository.
const invalidCredentials = "Invalid credentials in Authorization header"

// caller authenticates the request: 401 without a known token.
func (s *Server) caller(w http.ResponseWriter, r *http.Request) (account, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	a, known := s.tokens[tok]
	s.mu.Unlock()
	if !ok || !known {
		w.Header().Set("X-Error-Message", invalidCredentials)
		fail(w, http.StatusUnauthorized, invalidCredentials)
		return account{}, false
	}
	return a, true
}

// mayRead and mayWrite say what a may do with repository id of owner.
// Namespaces compare in any case, as on the Hub.
func (a account) mayRead(owner, id string) bool {
	if a.role == "fineGrained" {
		return slices.Contains(a.repos, id)
	}
	return a.owns(owner)
}

func (a account) mayWrite(owner, id string) bool {
	if a.role == "fineGrained" {
		return slices.Contains(a.repos, id)
	}
	return a.role == "write" && a.owns(owner)
}

// owns reports whether namespace is the account's user or one of its
// organisations.
func (a account) owns(namespace string) bool {
	isNamespace := func(o string) bool { return strings.EqualFold(o, namespace) }
	return strings.EqualFold(a.user, namespace) || slices.ContainsFunc(a.orgs, isNamespace)
}

// repoFor authenticates the caller and finds the repository of the path:
// 404 for one that does not exist or that the caller may not see, 403 when
// write is asked of a token that may not write there. A read without an
// Authorization header is anonymous, see anonymous; one with a header
// needs a known token, as on the Hub. The caller holds nothing; on success
// s.mu is held and must be released.
func (s *Server) repoFor(
	w http.ResponseWriter,
	r *http.Request,
	owner, name string,
	write bool,
) (*repo, bool) {
	if !write && r.Header.Get("Authorization") == "" {
		return s.anonymous(w, owner, name)
	}
	a, ok := s.caller(w, r)
	if !ok {
		return nil, false
	}
	id := owner + "/" + name
	s.mu.Lock()
	rp := s.repos[id]
	if rp == nil || (rp.private && !a.mayRead(owner, id)) {
		s.mu.Unlock()
		failCode(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		return nil, false
	}
	if write && !a.mayWrite(owner, id) {
		s.mu.Unlock()
		fail(w, http.StatusForbidden, "You don't have the rights to write to %s", id)
		return nil, false
	}
	return rp, true
}

// anonymous finds a repository for a read without a token: public ones
// only. A missing or private one answers 401 RepoNotFound: the Hub does
// not tell an anonymous caller which it is. On success s.mu is held and
// must be released.
func (s *Server) anonymous(w http.ResponseWriter, owner, name string) (*repo, bool) {
	s.mu.Lock()
	rp := s.repos[owner+"/"+name]
	if rp == nil || rp.private {
		s.mu.Unlock()
		failCode(w, http.StatusUnauthorized, "RepoNotFound", "Repository not found")
		return nil, false
	}
	return rp, true
}

// readAt finds, for a read, the path's repository and the commit its
// revision names, the default branch for HEAD or none, or answers the
// Hub's 401 or 404 with RepoNotFound or RevisionNotFound. On success s.mu
// is held and must be released.
func (s *Server) readAt(w http.ResponseWriter, r *http.Request) (*repo, *Commit, bool) {
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), false)
	if !ok {
		return nil, nil, false
	}
	rev := r.PathValue("rev")
	if rev == "" {
		rev = "HEAD"
	}
	c := rp.resolve(rev)
	if c == nil {
		s.mu.Unlock()
		failCode(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: %s", rev)
		return nil, nil, false
	}
	return rp, c, true
}

// slowBody is a request body read at rate bytes a second, in small steps,
// as from a slow client or a slow network between it and the Hub.
type slowBody struct {
	body io.ReadCloser
	rate int64
	pace pace
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p[:min(len(p), paceStep)])
	b.pace.wait(n, b.rate)
	return n, err
}

func (b *slowBody) Close() error { return b.body.Close() }

// paceStep is how many bytes a throttled body moves at a time.
const paceStep = 4 << 10

// pace keeps a transfer at a rate: after n more bytes it sleeps until the
// bytes so far are due, so that the sleeps' own overhead does not slow it.
type pace struct {
	start time.Time
	done  int64
}

func (p *pace) wait(n int, rate int64) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	p.done += int64(n)
	due := time.Duration(float64(p.done) / float64(rate) * float64(time.Second))
	time.Sleep(time.Until(p.start.Add(due)))
}
