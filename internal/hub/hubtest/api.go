package hubtest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	a, ok := s.caller(w, r)
	if !ok {
		return
	}
	orgs := []map[string]string{}
	for _, o := range a.orgs {
		orgs = append(orgs, map[string]string{"name": o})
	}
	token := map[string]any{"displayName": "test", "role": a.role}
	reply(w, map[string]any{
		"type": "user",
		"name": a.user,
		"orgs": orgs,
		"auth": map[string]any{"type": "access_token", "accessToken": token},
	})
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// create is POST /api/repos/create. Without a visibility or the older
// private flag the namespace's default applies; sending both is refused.
func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	a, ok := s.caller(w, r)
	if !ok {
		return
	}
	var in struct {
		Type         string `json:"type"`
		Name         string `json:"name"`
		Organization string `json:"organization"`
		Private      *bool  `json:"private"`
		Visibility   string `json:"visibility"`
	}
	if !decode(w, r, "application/json", &in) {
		return
	}
	owner := in.Organization
	if owner == "" {
		owner = a.user
	}
	id := owner + "/" + in.Name
	switch {
	case in.Type != "dataset":
		fail(w, http.StatusBadRequest, "type %q: this stand-in serves dataset repositories only",
			in.Type)
		return
	case !nameRE.MatchString(in.Name) || !nameRE.MatchString(owner):
		fail(w, http.StatusBadRequest, "invalid repository name %s", id)
		return
	case in.Private != nil && in.Visibility != "":
		fail(w, http.StatusBadRequest, "give visibility or private, not both")
		return
	case in.Visibility != "" && in.Visibility != "public" && in.Visibility != "private":
		fail(w, http.StatusBadRequest, "visibility %q: a dataset is public or private",
			in.Visibility)
		return
	case a.role != "write" || !a.owns(owner):
		fail(w, http.StatusForbidden,
			"You don't have the rights to create a dataset under the namespace %q", owner)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.repos {
		if strings.EqualFold(k, id) {
			// The Hub's 409 names the existing repository's URL, which
			// huggingface_hub's create_repo(exist_ok=True) returns, in
			// hf_api.py, HfApi.create_repo: RepoUrl(r.json()["url"]).
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]string{
				"error": "You already created this dataset repo",
				"url":   s.URL + "/datasets/" + k,
			})
			return
		}
	}
	private := s.orgPrivate[owner]
	switch {
	case in.Private != nil:
		private = *in.Private
	case in.Visibility != "":
		private = in.Visibility == "private"
	}
	rp := &repo{
		id:       id,
		private:  private,
		branches: map[string]string{},
		tags:     map[string]string{},
		commits:  map[string]*Commit{},
		lfs:      map[string][]byte{},
	}
	s.repos[id] = rp
	delete(s.renamed, strings.ToLower(id))
	var ga strings.Builder
	for _, p := range lfsPatterns {
		fmt.Fprintf(&ga, "%s filter=lfs diff=lfs merge=lfs -text\n", p)
	}
	initial := map[string]Entry{".gitattributes": {Data: []byte(ga.String())}}
	s.apply(rp, "main", "initial commit", initial)
	reply(w, map[string]string{"url": s.URL + "/datasets/" + id, "name": id, "id": id})
}

// validateYAML is POST /api/validate-yaml: whether a card's YAML front
// matter parses, which huggingface_hub's upload_folder asks before it
// hashes a folder with a README.md. hf_api.py, HfApi._validate_yaml reads
// a JSON answer with "errors" and "warnings" lists, 400 when it does not
// parse. A token is optional, but one that is sent must be known.
func (s *Server) validateYAML(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		if _, ok := s.caller(w, r); !ok {
			return
		}
	}
	var in struct {
		Content  string `json:"content"`
		RepoType string `json:"repoType"`
	}
	if !decode(w, r, "application/json", &in) {
		return
	}
	type message struct {
		Message string `json:"message"`
	}
	errs, warnings := []message{}, []message{}
	front, ok := frontMatter(in.Content)
	var meta map[string]any
	switch {
	case !ok:
		warnings = append(warnings, message{"empty or missing yaml metadata in repo card"})
	case yaml.Unmarshal([]byte(front), &meta) != nil:
		errs = append(errs, message{"the card's YAML front matter does not parse"})
	}
	w.Header().Set("Content-Type", "application/json")
	if len(errs) > 0 {
		w.WriteHeader(http.StatusBadRequest)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": errs, "warnings": warnings})
}

// frontMatter is the YAML between a card's opening "---" line and the next.
func frontMatter(card string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.ReplaceAll(card, "\r\n", "\n"), "---\n")
	if !ok {
		return "", false
	}
	front, _, ok := strings.Cut(rest, "\n---")
	return front, ok && strings.TrimSpace(front) != ""
}

// info is GET /api/datasets/{repo} and …/revision/{rev}, HEAD being the
// default branch: the commit sha and the files it holds as "siblings",
// which TruncateSiblings shortens as the Hub does for large repositories.
// With blobs=true each sibling also has its size, git blob id and LFS
// object, as huggingface_hub's dataset_info(files_metadata=True) asks and
// reads them. See hf_api.py, HfApi.dataset_info and DatasetInfo: blobId,
// size, lfs with sha256, size and pointerSize.
func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	blobs, okB := boolParam(r.URL.Query(), "blobs")
	if !okB {
		fail(w, http.StatusBadRequest, "blobs is true or false")
		return
	}
	rp, c, ok := s.readAt(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	siblings := []map[string]any{}
	for _, p := range slices.Sorted(maps.Keys(c.Files)) {
		if s.siblings >= 0 && len(siblings) >= s.siblings {
			break
		}
		sibling := map[string]any{"rfilename": p}
		if blobs {
			d := describe(rp, p, c.Files[p])
			sibling["size"], sibling["blobId"] = d["size"], d["oid"]
			if l, ok := d["lfs"].(map[string]any); ok {
				sibling["lfs"] = map[string]any{
					"sha256":      l["oid"],
					"size":        l["size"],
					"pointerSize": l["pointerSize"],
				}
			}
		}
		siblings = append(siblings, sibling)
	}
	reply(w, map[string]any{
		"_id":          rp.id,
		"id":           rp.id,
		"sha":          c.SHA,
		"private":      rp.private,
		"gated":        false,
		"disabled":     false,
		"downloads":    0,
		"likes":        0,
		"lastModified": "2025-01-01T00:00:00.000Z",
		"siblings":     siblings,
	})
}

// isLFS is the Hub's rule: tracked by .gitattributes, too large, or binary.
func isLFS(patterns []string, p string, size int64, sample []byte) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, path.Base(p)); ok {
			return true
		}
	}
	return size >= lfsThreshold || bytes.IndexByte(sample, 0) >= 0
}

// lfsRules are the patterns of the .gitattributes at c tracked by LFS,
// plus those of extra, a .gitattributes the commit brings.
func lfsRules(c *Commit, extra string) []string {
	var out []string
	for _, text := range []string{string(c.Files[".gitattributes"].Data), extra} {
		for _, line := range strings.Split(text, "\n") {
			if f := strings.Fields(line); len(f) > 1 && slices.Contains(f[1:], "filter=lfs") {
				out = append(out, f[0])
			}
		}
	}
	return out
}

func validPath(p string) bool {
	return p != "" &&
		!path.IsAbs(p) &&
		path.Clean(p) == p &&
		p != ".." &&
		!strings.HasPrefix(p, "../") &&
		!strings.HasPrefix(p, ".git/")
}

// preupload is POST /api/datasets/{repo}/preupload/{rev}: each file's
// upload mode, from its path, size and first 512 bytes, and the oid of the
// file of that path the branch holds, remoteOID. A .gitattributes the
// commit brings, gitAttributes sent by @huggingface/hub, counts with the
// branch's; gitIgnore from huggingface_hub is taken and not applied.
func (s *Server) preupload(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Files []struct {
			Path   string `json:"path"`
			Sample string `json:"sample"`
			Size   *int64 `json:"size"`
		} `json:"files"`
		GitAttributes string `json:"gitAttributes"`
		GitIgnore     string `json:"gitIgnore"`
	}
	if !decode(w, r, "application/json", &in) {
		return
	}
	type fileOut struct {
		Path         string `json:"path"`
		UploadMode   string `json:"uploadMode"`
		ShouldIgnore bool   `json:"shouldIgnore"`
		OID          string `json:"oid,omitempty"`
	}
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	head := rp.branches[r.PathValue("rev")]
	if head == "" {
		failCode(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: %s",
			r.PathValue("rev"))
		return
	}
	rules := lfsRules(rp.commits[head], in.GitAttributes)
	out := []fileOut{}
	for _, f := range in.Files {
		sample, err := base64.StdEncoding.DecodeString(f.Sample)
		switch {
		case !validPath(f.Path):
			fail(w, http.StatusBadRequest, "invalid path %q", f.Path)
			return
		case err != nil || len(sample) > 512:
			fail(w, http.StatusBadRequest, "sample of %s must be at most 512 bytes in base64",
				f.Path)
			return
		case f.Size == nil || *f.Size < 0:
			fail(w, http.StatusBadRequest, "size of %s is missing or negative", f.Path)
			return
		}
		mode := "regular"
		if isLFS(rules, f.Path, *f.Size, sample) {
			mode = "lfs"
		}
		out = append(out, fileOut{f.Path, mode, false, remoteOID(rp, rp.commits[head], f.Path)})
	}
	reply(w, map[string]any{"files": out, "commitOid": head})
}

// remoteOID is what preupload says of a file the branch holds already: an
// LFS file's sha256, a regular file's git blob sha1, "" for none.
// huggingface_hub compares it with the file it would send and leaves an
// unchanged one out of the commit, making none when nothing changed. See
// _commit_api.py, _fetch_upload_modes and CommitOperationAdd._local_oid;
// hf_api.py, HfApi.create_commit.
func remoteOID(rp *repo, c *Commit, p string) string {
	e, ok := c.Files[p]
	switch {
	case !ok:
		return ""
	case e.LFS:
		return e.OID
	}
	return gitBlob(e.Data)
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
			fail(w, http.StatusBadRequest,
				"line %d: the header must be the first line, and only it", i+1)
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
		failCode(w, http.StatusNotFound, "RevisionNotFound",
			"Invalid rev id: %s (commits go to an existing branch)", branch)
		return
	}
	if header.ParentCommit != "" && header.ParentCommit != head {
		// The Hub's answer to a parent that is no longer the head.
		fail(w, http.StatusPreconditionFailed,
			"A commit has happened since. Please refresh and try again.")
		return
	}
	rules := lfsRules(rp.commits[head], "")
	ops := map[string]Entry{}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := base64.StdEncoding.DecodeString(f.Content)
		switch {
		case !validPath(f.Path) || seen[f.Path]:
			fail(w, http.StatusBadRequest, "invalid or repeated path %q", f.Path)
			return
		case f.Encoding != "base64" || err != nil:
			fail(w, http.StatusBadRequest, "%s: content must be base64 with encoding base64",
				f.Path)
			return
		case isLFS(rules, f.Path, int64(len(data)), data[:min(len(data), 512)]):
			fail(w, http.StatusBadRequest, "Your push was rejected because it contains binary "+
				"or LFS-tracked files (%s) sent as regular files: use LFS", f.Path)
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
			fail(w, http.StatusUnprocessableEntity, "Your push was rejected because "+
				"an LFS pointer (%s, oid %s, %d bytes) points to a file that was not uploaded",
				f.Path, f.OID, f.Size)
			return
		}
		seen[f.Path] = true
		ops[f.Path] = Entry{LFS: true, OID: f.OID}
	}
	for _, p := range deleted {
		if _, ok := rp.commits[head].Files[p]; !ok || seen[p] {
			fail(w, http.StatusNotFound,
				"cannot delete %s: no such file at %s, or written in the same commit", p, head)
			return
		}
		seen[p] = true
		ops[p] = Entry{}
	}
	sha := s.apply(rp, branch, header.Summary, ops)
	id := r.PathValue("owner") + "/" + r.PathValue("name")
	reply(w, map[string]any{
		"success":        true,
		"commitOid":      sha,
		"commitUrl":      s.URL + "/datasets/" + id + "/commit/" + sha,
		"pullRequestUrl": nil,
	})
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
			out = append(out, map[string]string{
				"name":         k,
				"ref":          "refs/" + kind + "/" + k,
				"targetCommit": v,
			})
		}
		sort.Slice(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
		return out
	}
	reply(w, map[string]any{
		"branches": list(rp.branches, "heads"),
		"tags":     list(rp.tags, "tags"),
		"converts": []any{},
	})
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
		failCode(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: %s",
			r.PathValue("rev"))
	case rp.tags[in.Tag] != "":
		fail(w, http.StatusConflict, "Tag reference %s already exists", in.Tag)
	default:
		rp.tags[in.Tag] = c.SHA
		reply(w, map[string]string{"message": "ok"})
	}
}
