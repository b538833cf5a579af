package hub

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Options says where a push goes.
type Options struct {
	Repo     string // owner/name
	Revision string // the branch to commit to; "" is main
	Tag      string // tag the pushed commit, if set
	Message  string // the commit's summary; "" is DefaultMessage
	Private  bool   // when the push creates the repository
	// Replace lets the push replace another dataset that the revision
	// holds; without it the push fails with ErrOtherDataset.
	Replace bool
	// Progress, if set, hears each step; the activity heartbeats with it.
	Progress func(Progress)
}

// DefaultMessage is whestbench's commit message.
const DefaultMessage = "Upload whestbench dataset"

// Progress stages.
const (
	StageCompare = "compare"
	StageUpload  = "upload"
	StageCommit  = "commit"
	// StageWait is a wait the Hub asked for, such as a rate limit,
	// reported every second while it lasts.
	StageWait = "wait"
	// StageRetry is a request that failed and is tried again: a stall, a
	// 5xx, a dropped connection. Nothing moved; Retry says what failed.
	StageRetry = "retry"
)

// Progress is where a push is: a stage; while comparing, the files the Hub
// was asked about so far, Done of Total; while uploading, a file's bytes
// as they are sent. Done goes back when a part is sent again, and is the
// file's size for one the Hub has already.
type Progress struct {
	Stage       string
	File        string `json:",omitempty"`
	Done, Total int64  `json:",omitempty"`
	Wait        string `json:",omitempty"` // in StageWait: what is waited for, and how long is left
	Retry       string `json:",omitempty"` // in StageRetry: the failure tried again
}

// Result is what a push did.
type Result struct {
	Commit      string // the revision's commit holding the files, new or the existing one
	NoOp        bool   // the revision already held exactly these files: no commit made
	CreatedRepo bool
	// Sent and Reused count the LFS objects uploaded and those already on
	// the Hub: a resumed push reuses what it sent before.
	Sent, Reused int
	Deleted      int // files of an earlier dataset removed from OwnedFolders
	// Replaced: the revision held another dataset, which the commit
	// replaced under Options.Replace.
	Replaced bool
	Tagged   bool
	URL      string // the revision's file tree on the Hub's web site
}

// conflictRetries bounds how often a push re-reads a revision that moved
// under it, as when another push commits at the same time.
const conflictRetries = 3

// Push makes revision of the dataset repository hold files, in one commit:
// it creates the repository if needed, and private applies then. It
// compares the files with the revision, LFS files by sha256 and others by
// git blob sha1, uploads the LFS objects the Hub lacks, commits what
// changed on top of the head it compared against, deleting files an
// earlier dataset left in OwnedFolders, and tags the result. A revision
// that holds the files already gets no commit; a tag already on that
// commit is kept.
func (c *Client) Push(ctx context.Context, o Options, files []File) (Result, error) {
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.Message == "" {
		o.Message = DefaultMessage
	}
	if o.Progress == nil {
		o.Progress = func(Progress) {}
	}
	ctx = context.WithValue(ctx, progressKey{}, o.Progress)
	if err := CheckRepoID(o.Repo); err != nil {
		return Result{}, err
	}
	if err := checkPaths(files); err != nil {
		return Result{}, err
	}
	who, err := c.WhoAmI(ctx)
	if err != nil {
		return Result{}, err
	}
	if who.Auth.AccessToken.Role == "read" {
		return Result{}, &Error{
			Op:      "push to " + o.Repo,
			Status:  http.StatusForbidden,
			kind:    ErrForbidden,
			Message: fmt.Sprintf("the token of %s is a read token", who.Name),
			Hint:    createWriteToken,
		}
	}
	var res Result
	if res.CreatedRepo, err = c.CreateRepo(ctx, o.Repo, o.Private); err != nil {
		return res, err
	}
	for attempt := 1; ; attempt++ {
		err = c.pushOnce(ctx, o, files, &res)
		var he *Error
		if errors.As(err, &he) &&
			he.kind == ErrConflict &&
			strings.HasPrefix(he.Op, "commit") &&
			attempt < conflictRetries {
			continue // the branch moved: compare again with its new head
		}
		if err != nil {
			return res, err
		}
		break
	}
	rev := o.Revision
	if o.Tag != "" {
		if err := c.tag(ctx, o, res.Commit); err != nil {
			return res, err
		}
		res.Tagged = true
		rev = o.Tag
	}
	res.URL = c.Endpoint() + "/datasets/" + o.Repo + "/tree/" + url.PathEscape(rev)
	return res, nil
}

// pushOnce compares, uploads and commits against the revision's current
// head, whose files come from the complete listing of Tree.
func (c *Client) pushOnce(ctx context.Context, o Options, files []File, res *Result) error {
	o.Progress(Progress{Stage: StageCompare})
	head, err := c.Head(ctx, o.Repo, o.Revision)
	if err != nil {
		return err
	}
	listed, err := c.Tree(ctx, o.Repo, head)
	if err != nil {
		return err
	}
	remote := make(map[string]RemoteFile, len(listed))
	for _, f := range listed {
		remote[f.Path] = f
	}
	changed, err := changedFiles(ctx, files, remote)
	if err != nil {
		return err
	}
	gone := stale(remote, files)
	if len(changed) == 0 && len(gone) == 0 {
		res.Commit = head
		res.NoOp = true
		return nil
	}
	if why := otherDataset(remote, changed, gone); why != "" {
		if !o.Replace {
			return &OtherDatasetError{
				Repo:     o.Repo,
				Revision: o.Revision,
				Why:      why,
				Deleted:  len(gone),
			}
		}
		res.Replaced = true
	}
	modes, err := c.Preupload(ctx, o.Repo, o.Revision, changed)
	if err != nil {
		return err
	}
	var lfs []File
	for _, f := range changed {
		if modes[f.Path] == modeLFS {
			lfs = append(lfs, f)
		}
	}
	sent, reused, err := c.uploadLFS(ctx, o.Repo, o.Revision, lfs, o.Progress)
	res.Sent += sent
	res.Reused += reused
	if err != nil {
		return err
	}
	o.Progress(Progress{Stage: StageCommit})
	res.Commit, err = c.commit(ctx, o, head, changed, modes, gone)
	res.Deleted = len(gone)
	return err
}

// OwnedFolders are the folders of a dataset repository that hold nothing
// but the pushed dataset: a file there that the push does not carry is
// left from an earlier, different dataset and is deleted in the same
// commit. Left in place, an old data/ shard would be loaded with the new
// ones, since the card's configs select data files by pattern, mixing two
// datasets. A stale figure would sit beside the new report, and a stale
// prepared/<split>/ Arrow folder beside the new splits': whestbench's
// loader reads only the splits metadata.json lists, but a user browsing
// the repository would not know. Files elsewhere, such as a licence or
// notes an owner added, are kept.
var OwnedFolders = []string{dataFolder, "report/", "prepared/"}

// dataFolder holds a dataset's shards.
const dataFolder = "data/"

// stale is the remote paths in OwnedFolders that files do not hold, sorted.
func stale(remote map[string]RemoteFile, files []File) []string {
	pushed := make(map[string]bool, len(files))
	for _, f := range files {
		pushed[f.Path] = true
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(remote)) {
		for _, dir := range OwnedFolders {
			if strings.HasPrefix(p, dir) && !pushed[p] {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// otherDataset says why the revision holds a dataset other than the one
// pushed, "" when it does not: its metadata.json differs from the pushed
// one, or it holds data/ files the push does not carry and would delete.
// Re-pushing the same dataset, or pushing to a revision without one, is
// neither.
func otherDataset(remote map[string]RemoteFile, changed []File, gone []string) string {
	isMetadata := func(f File) bool { return f.Path == metadataPath }
	if _, ok := remote[metadataPath]; ok && slices.ContainsFunc(changed, isMetadata) {
		return "its metadata.json differs from the pushed one"
	}
	for _, p := range gone {
		if strings.HasPrefix(p, dataFolder) {
			return "it holds " + p + ", which the pushed dataset does not"
		}
	}
	return ""
}

// changedFiles is the files that remote, the head's listing, does not
// hold with the same content: LFS files compared by sha256, others by git
// blob sha1.
func changedFiles(ctx context.Context, files []File, remote map[string]RemoteFile) ([]File, error) {
	var out []File
	for _, f := range files {
		r, ok := remote[f.Path]
		switch {
		case !ok:
		case r.LFS != nil:
			if r.LFS.OID == f.SHA256 && r.LFS.Size == f.Size {
				continue
			}
		case r.Size == f.Size:
			sum, err := blobSHA1(ctx, f)
			if err != nil {
				return nil, fmt.Errorf("hub: reading %s: %w", f.Path, err)
			}
			if sum == r.OID {
				continue
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// commit posts the NDJSON commit: a header naming the parent it was
// compared against, so a moved branch is a conflict, not a silent
// overwrite; an lfsFile line per LFS file; and a file line per regular
// file with its content in base64, streamed and checked against its
// sha256 on the way. A damaged source aborts the request, so no commit is
// made.
func (c *Client) commit(
	ctx context.Context,
	o Options,
	parent string,
	files []File,
	modes map[string]string,
	deleted []string,
) (string, error) {
	body := func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			pw.CloseWithError(writeCommit(ctx, pw, o.Message, parent, files, modes, deleted))
		}()
		return pr, nil
	}
	resp, err := c.do(ctx, request{
		op:          "commit to " + o.Repo + "@" + o.Revision,
		method:      http.MethodPost,
		url:         c.apiURL(repoPath(o.Repo) + "/commit/" + url.PathEscape(o.Revision)),
		auth:        true,
		contentType: "application/x-ndjson",
		size:        -1,
		body:        body,
	})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		CommitOID string `json:"commitOid"`
	}
	if err := decodeAnswer("commit to "+o.Repo, resp.Body, maxAnswer, &out); err != nil {
		return "", err
	}
	if !isHex(out.CommitOID, 40) {
		return "", fmt.Errorf("hub: commit to %s: the Hub answered no commit sha", o.Repo)
	}
	return out.CommitOID, nil
}

func writeCommit(
	ctx context.Context,
	w io.Writer,
	message, parent string,
	files []File,
	modes map[string]string,
	deleted []string,
) error {
	enc := json.NewEncoder(w)
	type header struct {
		Summary      string `json:"summary"`
		Description  string `json:"description"`
		ParentCommit string `json:"parentCommit"`
	}
	type line struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	if err := enc.Encode(line{"header", header{message, "", parent}}); err != nil {
		return err
	}
	for _, f := range files {
		if modes[f.Path] != modeLFS {
			continue
		}
		v := struct {
			Path string `json:"path"`
			Algo string `json:"algo"`
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		}{
			Path: f.Path,
			Algo: "sha256",
			OID:  f.SHA256,
			Size: f.Size,
		}
		if err := enc.Encode(line{"lfsFile", v}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if modes[f.Path] == modeLFS {
			continue
		}
		if err := writeFileLine(ctx, w, f); err != nil {
			return err
		}
	}
	for _, p := range deleted {
		v := struct {
			Path string `json:"path"`
		}{p}
		if err := enc.Encode(line{"deletedFile", v}); err != nil {
			return err
		}
	}
	return nil
}

// writeFileLine writes {"key":"file","value":{"path":…,"encoding":"base64","content":"…"}}
// with the content streamed. The path is JSON-encoded; base64 needs no escaping.
func writeFileLine(ctx context.Context, w io.Writer, f File) error {
	p, err := json.Marshal(f.Path)
	if err != nil {
		return err
	}
	opening := `{"key":"file","value":{"path":` + string(p) + `,"encoding":"base64","content":"`
	if _, err := io.WriteString(w, opening); err != nil {
		return err
	}
	r, err := f.Open(ctx, 0)
	if err != nil {
		return fmt.Errorf("hub: reading %s: %w", f.Path, err)
	}
	defer r.Close()
	h := sha256.New()
	b64 := base64.NewEncoder(base64.StdEncoding, w)
	n, err := io.Copy(b64, io.TeeReader(r, h))
	if err != nil {
		return fmt.Errorf("hub: reading %s: %w", f.Path, err)
	}
	if err := b64.Close(); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != f.Size || sum != f.SHA256 {
		return fmt.Errorf("hub: %s has %d bytes with sha256 %s, but %d bytes with sha256 %s "+
			"were listed: the source changed or is damaged; nothing was committed",
			f.Path, n, sum, f.Size, f.SHA256)
	}
	_, err = io.WriteString(w, "\"}}\n")
	return err
}

// tag puts o.Tag on commit, unless it is there already; a tag on another
// commit is a conflict. Tags are releases: moving one would change what a
// published name means.
func (c *Client) tag(ctx context.Context, o Options, commit string) error {
	tags, err := c.Tags(ctx, o.Repo)
	if err != nil {
		return err
	}
	if at, ok := tags[o.Tag]; ok {
		if at == commit {
			return nil
		}
		return &Error{
			Op:     "tag " + o.Tag + " of " + o.Repo,
			Status: http.StatusConflict,
			kind:   ErrConflict,
			Message: fmt.Sprintf("tag %s already points at commit %s, not at %s",
				o.Tag, at, commit),
			Hint: "choose another tag; a published tag is never moved",
		}
	}
	return c.CreateTag(ctx, o.Repo, commit, o.Tag, o.Message)
}

// checkPaths refuses paths the Hub would reject or that name one file twice.
func checkPaths(files []File) error {
	seen := map[string]bool{}
	for _, f := range files {
		if f.Path == "" ||
			path.IsAbs(f.Path) ||
			path.Clean(f.Path) != f.Path ||
			strings.HasPrefix(f.Path, "../") ||
			f.Path == ".." ||
			strings.HasPrefix(f.Path, ".git/") {
			return fmt.Errorf("hub: %q cannot be a path in a repository "+
				"(relative, clean, outside .git/)", f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("hub: %s is listed twice", f.Path)
		}
		seen[f.Path] = true
	}
	return nil
}
