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

// rangeRE is a single byte range: bytes=A-B, bytes=A- or bytes=-N.
var rangeRE = regexp.MustCompile(`^bytes=(\d*)-(\d*)$`)

// byteRange is the [start, end) of data that rg asks for; ok is false for a
// range that data cannot satisfy.
func byteRange(rg string, size int) (start, end int, ok bool) {
	m := rangeRE.FindStringSubmatch(rg)
	a, errA := strconv.Atoi(m[1])
	b, errB := strconv.Atoi(m[2])
	switch {
	case m[1] == "" && errB == nil && b > 0: // the last b bytes
		return max(0, size-b), size, size > 0
	case errA != nil || a >= size:
		return 0, 0, false
	case m[2] == "":
		return a, size, true
	case errB != nil || b < a:
		return 0, 0, false
	}
	return a, min(b+1, size), true
}

// serve answers a GET of data with the Range handling of the Hub's resolve
// and storage URLs: no Range → 200; one satisfiable range → 206 with its
// Content-Range, which is how clients probe a size with bytes=0-0 and
// resume with bytes=N-; an unsatisfiable one → 416; several ranges → 400,
// a stand-in's strictness: no client of the Hub sends them. Hang, Throttle
// and CutNext act on the body here.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, route string, data []byte) {
	start, end := 0, len(data)
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" {
		s.mu.Lock()
		s.ranges[route] = append(s.ranges[route], rg)
		s.mu.Unlock()
		if !rangeRE.MatchString(rg) {
			fail(w, http.StatusBadRequest, "Range %q: this stand-in serves one range of bytes", rg)
			return
		}
		var ok bool
		if start, end, ok = byteRange(rg, len(data)); !ok {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			fail(w, http.StatusRequestedRangeNotSatisfiable, "Range %q beyond %d bytes",
				rg, len(data))
			return
		}
		status = http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end-1, len(data)))
	}
	body := data[start:end]
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	s.mu.Lock()
	cut := int64(-1)
	if c := s.cuts[route]; len(c) > 0 && c[0] < int64(len(body)) {
		cut, s.cuts[route] = c[0], c[1:]
	}
	hang, hung := s.hangs[route]
	rate := s.throttles[route]
	s.mu.Unlock()
	w.WriteHeader(status)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	switch {
	case hung && hang < int64(len(body)):
		_, _ = w.Write(body[:hang])
		flush()
		s.hold(r)
	case cut >= 0:
		_, _ = w.Write(body[:cut])
		// A short body with its full Content-Length: net/http closes the
		// connection, and the client sees an unexpected EOF.
		flush()
		panic(http.ErrAbortHandler)
	case rate > 0:
		var p pace
		for len(body) > 0 && r.Context().Err() == nil {
			n := min(paceStep, len(body))
			_, _ = w.Write(body[:n])
			flush()
			body = body[n:]
			p.wait(n, rate)
		}
	default:
		_, _ = w.Write(body)
	}
}

// fileAt finds, for a read, the path's file at its revision, or answers
// the Hub's 401 or 404, EntryNotFound for a missing file. On success s.mu
// is held and must be released.
func (s *Server) fileAt(w http.ResponseWriter, r *http.Request) (*repo, *Commit, Entry, bool) {
	rp, c, ok := s.readAt(w, r)
	if !ok {
		return nil, nil, Entry{}, false
	}
	e, ok := c.Files[r.PathValue("path")]
	if !ok {
		s.mu.Unlock()
		failCode(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
		return nil, nil, Entry{}, false
	}
	return rp, c, e, true
}

// resolveFile is the Hub's file download: a regular file's bytes with its
// git blob sha1 as ETag, or for an LFS file a 302 to a signed storage URL,
// its sha256 as X-Linked-Etag and its size as X-Linked-Size; X-Repo-Commit
// names the commit either way.
func (s *Server) resolveFile(w http.ResponseWriter, r *http.Request) {
	rp, c, e, ok := s.fileAt(w, r)
	if !ok {
		return
	}
	w.Header().Set("X-Repo-Commit", c.SHA)
	if e.LFS {
		size := len(rp.lfs[e.OID])
		s.mu.Unlock()
		w.Header().Set("X-Linked-Etag", `"`+e.OID+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(size))
		w.Header().Set("ETag", `"`+e.OID+`"`)
		storage := s.storageBase() + "/lfs-files/" + e.OID + "?" + s.signature(e.OID)
		http.Redirect(w, r, storage, http.StatusFound)
		return
	}
	data := bytes.Clone(e.Data)
	s.mu.Unlock()
	w.Header().Set("ETag", `"`+gitBlob(data)+`"`)
	s.serve(w, r, "resolve", data)
}

// rawFile is the git content of a file: a regular file's bytes, an LFS
// file's pointer, as @huggingface/hub's downloadFile({raw: true}) reads it.
func (s *Server) rawFile(w http.ResponseWriter, r *http.Request) {
	rp, c, e, ok := s.fileAt(w, r)
	if !ok {
		return
	}
	data := bytes.Clone(e.Data)
	if e.LFS {
		data = []byte(lfsPointer(e.OID, int64(len(rp.lfs[e.OID]))))
	}
	s.mu.Unlock()
	w.Header().Set("X-Repo-Commit", c.SHA)
	w.Header().Set("ETag", `"`+gitBlob(data)+`"`)
	s.serve(w, r, "raw", data)
}

// lfsPointer is the git LFS pointer file of an object.
func lfsPointer(oid string, size int64) string {
	return fmt.Sprintf("version https://git-lfs.github.com/spec/v1\n"+
		"oid sha256:%s\nsize %d\n", oid, size)
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

// lfsFile is the storage behind an LFS redirect: the signed URL only. On
// another origin it never takes the token: see storageRoutes.
func (s *Server) lfsFile(w http.ResponseWriter, r *http.Request) {
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
	w.Header().Set("ETag", `"`+oid+`"`)
	s.serve(w, r, "lfs-file", data)
}
