package hubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// anonymous finds a repository for a read without a token: public ones
// only; a private one answers 401, as the Hub does before it knows who
// asks. On success s.mu is held and must be released.
func (s *Server) anonymous(w http.ResponseWriter, owner, name string) (*repo, bool) {
	s.mu.Lock()
	rp := s.repos[owner+"/"+name]
	switch {
	case rp == nil:
		s.mu.Unlock()
		fail(w, http.StatusNotFound, "Repository not found")
		return nil, false
	case rp.private:
		s.mu.Unlock()
		fail(w, http.StatusUnauthorized, "Invalid username or password.")
		return nil, false
	}
	return rp, true
}

// CutNext makes answers of route ("resolve" or "lfs-file") stop after
// after[0], after[1], … body bytes, the connection closed (a download cut
// mid-file): each cut applies to the next answer longer than it.
func (s *Server) CutNext(route string, after ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cuts[route] = append(s.cuts[route], after...)
}

// CorruptLFS replaces the stored content of LFS object oid (a storage
// that serves other bytes than the Hub recorded).
func (s *Server) CorruptLFS(id, oid string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[id].lfs[oid] = data
}

// rangeRE is the one Range form huggingface_hub sends to resume: bytes=N-.
var rangeRE = regexp.MustCompile(`^bytes=(\d+)-$`)

// serve answers a GET of data with the Range handling the Hub's resolve and
// storage URLs have: no Range → 200; bytes=N- with N < len → 206 from N;
// N ≥ len → 416; any other Range form → 400 (a stand-in's strictness: the
// client has no business sending it).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, route string, data []byte) {
	start := 0
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" {
		m := rangeRE.FindStringSubmatch(rg)
		if m == nil {
			fail(w, http.StatusBadRequest, "Range %q: this stand-in serves bytes=N- only", rg)
			return
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n >= len(data) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			fail(w, http.StatusRequestedRangeNotSatisfiable, "Range %q beyond %d bytes", rg, len(data))
			return
		}
		start, status = n, http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
	}
	body := data[start:]
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	s.mu.Lock()
	cut := int64(-1)
	if c := s.cuts[route]; len(c) > 0 && c[0] < int64(len(body)) {
		cut, s.cuts[route] = c[0], c[1:]
	}
	s.mu.Unlock()
	w.WriteHeader(status)
	if cut >= 0 {
		_, _ = w.Write(body[:cut])
		// A short body with its full Content-Length: net/http closes the
		// connection, and the client sees an unexpected EOF.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	_, _ = w.Write(body)
}

// resolveFile is the Hub's file download: a regular file's bytes with its
// git blob sha1 as ETag, or for an LFS file a 302 to a signed storage URL,
// its sha256 as X-Linked-Etag and its size as X-Linked-Size; X-Repo-Commit
// names the commit either way.
func (s *Server) resolveFile(w http.ResponseWriter, r *http.Request) {
	rp, ok := s.repoFor(w, r, r.PathValue("owner"), r.PathValue("name"), false)
	if !ok {
		return
	}
	c := rp.resolve(r.PathValue("rev"))
	if c == nil {
		s.mu.Unlock()
		fail(w, http.StatusNotFound, "Revision Not Found for url %s", r.URL.Path)
		return
	}
	e, ok := c.Files[r.PathValue("path")]
	if !ok {
		s.mu.Unlock()
		w.Header().Set("X-Error-Code", "EntryNotFound")
		fail(w, http.StatusNotFound, "Entry not found")
		return
	}
	w.Header().Set("X-Repo-Commit", c.SHA)
	if e.LFS {
		size := len(rp.lfs[e.OID])
		s.mu.Unlock()
		w.Header().Set("X-Linked-Etag", `"`+e.OID+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(size))
		w.Header().Set("ETag", `"`+e.OID+`"`)
		http.Redirect(w, r, s.URL+"/lfs-files/"+e.OID+"?"+s.signature(e.OID), http.StatusFound)
		return
	}
	data := bytes.Clone(e.Data)
	s.mu.Unlock()
	w.Header().Set("ETag", `"`+gitBlob(data)+`"`)
	s.serve(w, r, "resolve", data)
}

// signature is the query that makes a storage URL valid for an hour.
func (s *Server) signature(oid string) string {
	exp := time.Now().Add(time.Hour).Unix()
	return fmt.Sprintf("Expires=%d&Signature=%s", exp, s.sign(oid, exp))
}

func (s *Server) sign(oid string, exp int64) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s", oid, exp, s.URL)))
	return hex.EncodeToString(h[:])
}

// lfsFile is the storage behind an LFS redirect: the signed URL only, and
// never the token (a client must not send its Hub token to storage).
func (s *Server) lfsFile(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		fail(w, http.StatusBadRequest, "storage URLs do not take the Hub token")
		return
	}
	oid := r.PathValue("oid")
	exp, err := strconv.ParseInt(r.URL.Query().Get("Expires"), 10, 64)
	if err != nil || r.URL.Query().Get("Signature") != s.sign(oid, exp) || time.Now().Unix() > exp {
		fail(w, http.StatusForbidden, "Request has expired or its signature does not match")
		return
	}
	s.mu.Lock()
	var data []byte
	for _, rp := range s.repos {
		if d, ok := rp.lfs[oid]; ok {
			data = bytes.Clone(d)
			break
		}
	}
	s.mu.Unlock()
	if data == nil {
		fail(w, http.StatusNotFound, "no such object")
		return
	}
	s.serve(w, r, "lfs-file", data)
}
