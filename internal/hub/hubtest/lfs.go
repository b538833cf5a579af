package hubtest

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

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
	s.mu.Lock()
	s.offered = append(s.offered, in.Transfers)
	s.mu.Unlock()
	switch {
	case in.Operation != "upload":
		fail(w, http.StatusBadRequest, "operation %q: this stand-in takes upload", in.Operation)
		return
	case in.HashAlgo != "" && in.HashAlgo != "sha256" && in.HashAlgo != "sha_256":
		// huggingface_hub sends sha256, git-lfs's name; @huggingface/hub sha_256.
		fail(w, http.StatusConflict, "hash_algo %q: only sha256", in.HashAlgo)
		return
	case !slices.Contains(in.Transfers, "basic") && !slices.Contains(in.Transfers, "multipart"):
		fail(w, http.StatusBadRequest, "transfers %v: offer basic or multipart", in.Transfers)
		return
	case len(in.Objects) == 0:
		fail(w, http.StatusBadRequest, "objects is empty")
		return
	}
	for _, o := range in.Objects {
		if !isSHA256(o.OID) || o.Size == nil || *o.Size < 0 {
			fail(w, http.StatusUnprocessableEntity, "object %q: "+
				"oid must be 64 lowercase hex digits and size a non-negative number", o.OID)
			return
		}
	}
	owner := r.PathValue("owner")
	rp, ok := s.repoFor(w, r, owner, name, true)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	if in.Ref != nil && rp.branches[in.Ref.Name] == "" {
		// Both reference clients send the branch's name: huggingface_hub in
		// lfs.py post_lfs_batch_info, @huggingface/hub in commit.ts.
		fail(w, http.StatusUnprocessableEntity, "ref %q is not a branch of %s/%s: "+
			"name the branch the commit goes to", in.Ref.Name, owner, name)
		return
	}
	multipart := slices.Contains(in.Transfers, "multipart")
	transfer := "basic"
	if multipart {
		transfer = "multipart"
	}
	var objs []map[string]any
	actions := map[string]any{} // one upload per object, however often it is listed
	for _, o := range in.Objects {
		obj := map[string]any{"oid": o.OID, "size": *o.Size, "authenticated": true}
		if a, ok := actions[o.OID]; ok {
			if a != nil {
				obj["actions"] = a
			}
			objs = append(objs, obj)
			continue
		}
		actions[o.OID] = nil
		if d, ok := rp.lfs[o.OID]; ok && int64(len(d)) == *o.Size {
			objs = append(objs, obj) // stored already: no actions
			continue
		}
		s.nextID++
		id := strconv.Itoa(s.nextID)
		up := &upload{
			repo:  owner + "/" + name,
			oid:   o.OID,
			size:  *o.Size,
			parts: map[int][]byte{},
		}
		s.uploads[id] = up
		upAction := map[string]any{
			"href":   s.storageBase() + "/storage/" + id,
			"header": map[string]string{},
		}
		if multipart && *o.Size > s.ChunkSize {
			up.nParts = int((*o.Size + s.ChunkSize - 1) / s.ChunkSize)
			h := map[string]string{"chunk_size": strconv.FormatInt(s.ChunkSize, 10)}
			for n := 1; n <= up.nParts; n++ {
				h[fmt.Sprintf("%05d", n)] = fmt.Sprintf("%s/storage/%s/%d", s.storageBase(), id, n)
			}
			upAction = map[string]any{"href": s.URL + "/lfs-complete/" + id, "header": h}
		}
		obj["actions"] = map[string]any{
			"upload": upAction,
			"verify": map[string]any{
				"href":   s.URL + "/lfs-verify/" + owner + "/" + name,
				"header": map[string]string{},
			},
		}
		actions[o.OID] = obj["actions"]
		objs = append(objs, obj)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"transfer":  transfer,
		"objects":   objs,
		"hash_algo": "sha256",
	})
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func (s *Server) basicPut(w http.ResponseWriter, r *http.Request) {
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
	sum := sha256.Sum256(data)
	if int64(len(data)) != up.size || hex.EncodeToString(sum[:]) != up.oid {
		fail(w, http.StatusBadRequest, "content does not match oid %s and size %d", up.oid, up.size)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[up.repo].lfs[up.oid] = data
	delete(s.uploads, r.PathValue("id"))
}

func (s *Server) partPut(w http.ResponseWriter, r *http.Request) {
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
		fail(w, http.StatusBadRequest, "part %d must be %d bytes with a Content-Length, got %d",
			n, want, r.ContentLength)
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
		fail(w, http.StatusBadRequest, "%d parts listed, the upload has %d",
			len(in.Parts), up.nParts)
		return
	}
	var all []byte
	for i, p := range in.Parts {
		data, ok := up.parts[p.PartNumber]
		sum := md5.Sum(data)
		if p.PartNumber != i+1 || !ok || p.ETag != `"`+hex.EncodeToString(sum[:])+`"` {
			fail(w, http.StatusBadRequest, "part %d: missing, out of order, or ETag %s "+
				"does not match the uploaded part", p.PartNumber, p.ETag)
			return
		}
		all = append(all, data...)
	}
	sum := sha256.Sum256(all)
	if int64(len(all)) != up.size || hex.EncodeToString(sum[:]) != up.oid {
		fail(w, http.StatusBadRequest, "assembled parts do not match oid %s and size %d",
			up.oid, up.size)
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
	// git-lfs's media type, or plain JSON: huggingface_hub's lfs.py,
	// lfs_upload posts the verification with json=, as application/json.
	want := "application/vnd.git-lfs+json"
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		want = "application/json"
	}
	if !decode(w, r, want, &in) {
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
