package hubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

func gitBlob(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// describe is a file of rp as the Hub's tree and paths-info list it: its
// size, its git blob sha1, of the pointer for an LFS file, and for an LFS
// file the object's sha256 and size. The caller holds s.mu.
func describe(rp *repo, p string, e Entry) map[string]any {
	item := map[string]any{"type": "file", "path": p}
	if e.LFS {
		size := int64(len(rp.lfs[e.OID]))
		pointer := lfsPointer(e.OID, size)
		item["size"] = size
		item["oid"] = gitBlob([]byte(pointer))
		item["lfs"] = map[string]any{"oid": e.OID, "size": size, "pointerSize": len(pointer)}
	} else {
		item["size"] = len(e.Data)
		item["oid"] = gitBlob(e.Data)
	}
	return item
}

// boolParam reads a query flag as the clients send it: "true"/"false"
// from both, "1"/"0" accepted too; ok is false for anything else.
func boolParam(q url.Values, key string) (value, ok bool) {
	switch strings.ToLower(q.Get(key)) {
	case "", "false", "0":
		return false, true
	case "true", "1":
		return true, true
	}
	return false, false
}

// tree is GET /api/datasets/{repo}/tree/{rev}[/{path}]: the entries under
// path, its children or with recursive=true everything below, files and
// folders, sorted by path, TreePageSize at a time. A Link header with
// rel="next" names the next page by an absolute URL with a cursor, as
// huggingface_hub's list_repo_tree and @huggingface/hub's listFiles follow.
func (s *Server) tree(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	recursive, okR := boolParam(q, "recursive")
	_, okE := boolParam(q, "expand")
	if !okR || !okE {
		fail(w, http.StatusBadRequest, "recursive and expand are true or false")
		return
	}
	rp, c, ok := s.readAt(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	dir := strings.Trim(r.PathValue("path"), "/")
	var entries []map[string]any
	folders := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(c.Files)) {
		rel, ok := strings.CutPrefix(p, dir+"/")
		if dir == "" {
			rel, ok = p, true
		}
		if !ok {
			continue
		}
		// The folders between dir and the file, once each.
		parts := strings.Split(rel, "/")
		for i := range len(parts) - 1 {
			if i > 0 && !recursive {
				break
			}
			f := path.Join(dir, strings.Join(parts[:i+1], "/"))
			if !folders[f] {
				folders[f] = true
				entries = append(entries, map[string]any{
					"type": "directory",
					"path": f,
					"size": 0,
					"oid":  gitBlob([]byte("tree " + f)),
				})
			}
		}
		if recursive || len(parts) == 1 {
			entries = append(entries, describe(rp, p, c.Files[p]))
		}
	}
	if dir != "" && len(entries) == 0 {
		failCode(w, http.StatusNotFound, "EntryNotFound", "%s does not exist at %s", dir, c.SHA)
		return
	}
	slices.SortStableFunc(entries, func(a, b map[string]any) int {
		return strings.Compare(a["path"].(string), b["path"].(string))
	})
	start := 0
	if cur := q.Get("cursor"); cur != "" {
		after, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil {
			fail(w, http.StatusBadRequest, "invalid cursor")
			return
		}
		start = slices.IndexFunc(entries, func(e map[string]any) bool {
			return e["path"].(string) > string(after)
		})
		if start < 0 {
			start = len(entries)
		}
	}
	end := min(start+max(s.TreePageSize, 1), len(entries))
	if end < len(entries) {
		next := *r.URL
		last := entries[end-1]["path"].(string)
		q.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(last)))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf("<%s%s>; rel=\"next\"", s.URL, next.RequestURI()))
	}
	reply(w, append([]map[string]any{}, entries[start:end]...))
}

// pathsInfo is POST /api/datasets/{repo}/paths-info/{rev}: those of the
// paths that are files at rev, described as tree does. The paths come as a
// form from huggingface_hub, paths=…&expand=…, or as JSON from
// @huggingface/hub, {"paths": […], "expand": …}.
func (s *Server) pathsInfo(w http.ResponseWriter, r *http.Request) {
	var paths []string
	switch ct := r.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		var in struct {
			Paths  []string `json:"paths"`
			Expand *bool    `json:"expand"`
		}
		if !decode(w, r, "application/json", &in) {
			return
		}
		paths = in.Paths
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
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
		paths = r.PostForm["paths"]
	default:
		fail(w, http.StatusBadRequest,
			"Content-Type is %q, want application/json or application/x-www-form-urlencoded", ct)
		return
	}
	if len(paths) == 0 {
		fail(w, http.StatusBadRequest, "paths is required")
		return
	}
	rp, c, ok := s.readAt(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, p := range paths {
		if e, ok := c.Files[p]; ok {
			out = append(out, describe(rp, p, e))
		}
	}
	reply(w, out)
}
