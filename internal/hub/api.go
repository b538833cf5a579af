package hub

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// repoRE is a Hub repository id, by the Hub's own rule: owner/name, each of
// letters, digits, '-', '_' and '.', not starting or ending with '-' or '.'.
var repoRE = regexp.MustCompile(`^` + repoPart + `/` + repoPart + `$`)

// repoPart is the owner or the name of a repository id.
const repoPart = `[A-Za-z0-9]([A-Za-z0-9._-]{0,94}[A-Za-z0-9])?`

// CheckRepoID reports whether id is a repository id the Hub accepts.
func CheckRepoID(id string) error {
	if !repoRE.MatchString(id) || strings.Contains(id, "..") || strings.Contains(id, "--") {
		return fmt.Errorf("%q is not a Hub repository id: write owner/name (your user or "+
			"organization, then the dataset's name: letters, digits, '-', '_', '.')", id)
	}
	return nil
}

// repoPath is /api/datasets/<owner>/<name>.
func repoPath(repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	return "/api/datasets/" + url.PathEscape(owner) + "/" + url.PathEscape(name)
}

// Whoami is the token's account, as GET /api/whoami-v2 describes it.
type Whoami struct {
	Name string `json:"name"`
	Auth struct {
		AccessToken struct {
			Role string `json:"role"` // read, write or fineGrained
		} `json:"accessToken"`
	} `json:"auth"`
}

// WhoAmI checks the token and names its account.
func (c *Client) WhoAmI(ctx context.Context) (Whoami, error) {
	var w Whoami
	err := c.call(ctx, "whoami", http.MethodGet, "/api/whoami-v2", nil, &w, maxAnswer)
	return w, err
}

// CreateRepo creates dataset repository repo, private when asked. Without
// private it sends no visibility, so the namespace's default stands: an
// organisation may make its new repositories private. huggingface_hub's
// create_repo sends one only when given, in hf_api.py,
// _resolve_repo_visibility. It reports false when the repository exists
// already, which is no error: a 409, or, as create_repo(exist_ok=True)
// treats them, a 401, 402 or 403 when the repository can be read. Such a
// token may write to the repository but not create one.
func (c *Client) CreateRepo(ctx context.Context, repo string, private bool) (bool, error) {
	owner, name, _ := strings.Cut(repo, "/")
	in := struct {
		Type         string `json:"type"`
		Name         string `json:"name"`
		Organization string `json:"organization"`
		Visibility   string `json:"visibility,omitempty"`
	}{Type: "dataset", Name: name, Organization: owner}
	if private {
		in.Visibility = "private"
	}
	err := c.call(ctx, "create repo "+repo, http.MethodPost, "/api/repos/create", in, nil,
		maxAnswer)
	var he *Error
	switch {
	case err == nil:
		return true, nil
	case !errors.As(err, &he):
	case he.Status == http.StatusConflict:
		return false, nil
	case he.Status == http.StatusUnauthorized ||
		he.Status == http.StatusPaymentRequired ||
		he.Status == http.StatusForbidden:
		if c.call(ctx, "read "+repo, http.MethodGet, repoPath(repo), nil, nil, maxAnswer) == nil {
			return false, nil
		}
	}
	return false, err
}

// Head is the commit revision points at; a revision is a branch, tag or
// commit. The files come from Tree: the revision's "siblings" are
// truncated for large repositories.
func (c *Client) Head(ctx context.Context, repo, revision string) (string, error) {
	var info struct {
		SHA string `json:"sha"`
	}
	op := "read revision " + revision + " of " + repo
	path := repoPath(repo) + "/revision/" + url.PathEscape(revision)
	if err := c.call(ctx, op, http.MethodGet, path, nil, &info, maxRevision); err != nil {
		return "", err
	}
	if !isHex(info.SHA, 40) {
		return "", fmt.Errorf("hub: revision %s of %s: the Hub answered no commit sha",
			revision, repo)
	}
	return info.SHA, nil
}

// RemoteFile is a file of a revision, as the Hub's tree listing describes
// it.
type RemoteFile struct {
	Type string `json:"type"` // "file"; Tree leaves out "directory"
	Path string `json:"path"`
	Size int64  `json:"size"`
	OID  string `json:"oid"` // the git blob's sha1, of the LFS pointer for an LFS file
	LFS  *struct {
		OID  string `json:"oid"` // sha256 of the content
		Size int64  `json:"size"`
	} `json:"lfs,omitempty"`
}

// A listing's bounds: files, pages and the length of a next page's URL. A
// dataset repository holds hundreds of files; the Hub recommends fewer than
// 100,000 to a repository, in pages of a thousand entries:
// https://huggingface.co/docs/hub/storage-limits. The files cost a few
// hundred bytes each in memory, the pages' URLs are kept to see a loop.
const (
	maxTreeFiles   = 100_000
	maxTreePages   = 10_000
	maxNextPageURL = 8 << 10
)

// Tree lists every file of repo at revision, which a commit sha pins: GET
// /api/datasets/{repo}/tree/{revision}?recursive=true, page after page as
// the Link header's rel="next" names them, as huggingface_hub's
// list_repo_tree reads it in utils/_pagination.py, paginate, and as
// @huggingface/hub's listFiles does. Pages are followed on the Hub's own
// origin only: the token goes with them.
func (c *Client) Tree(ctx context.Context, repo, revision string) ([]RemoteFile, error) {
	op := "list the files of " + repo + "@" + revision
	next := c.apiURL(repoPath(repo) + "/tree/" + url.PathEscape(revision) +
		"?recursive=true&expand=false")
	seen := map[string]bool{}
	var files []RemoteFile
	for next != "" {
		switch {
		case seen[next]:
			return nil, fmt.Errorf("hub: %s: the Hub's pages loop back to %s", op, next)
		case len(seen) == maxTreePages:
			return nil, fmt.Errorf("hub: %s: over %d pages, more than any listing of %d files "+
				"takes: refused", op, maxTreePages, maxTreeFiles)
		}
		seen[next] = true
		resp, err := c.do(ctx, request{
			op:     op,
			method: http.MethodGet,
			url:    next,
			auth:   true,
			header: map[string]string{"Accept": "application/json"},
		})
		if err != nil {
			return nil, err
		}
		var page []RemoteFile
		err = decodeAnswer(op, resp.Body, maxTreePage, &page)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		for _, f := range page {
			if f.Type == "file" {
				files = append(files, f)
			}
		}
		if len(files) > maxTreeFiles {
			return nil, fmt.Errorf("hub: %s: over %d files, more than the Hub keeps in a "+
				"repository: refused", op, maxTreeFiles)
		}
		if next, err = c.nextPage(op, resp); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// linkNextRE finds the rel="next" link of a Link header, RFC 8288.
var linkNextRE = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// nextPage is the URL of the page after resp, "" for the last one.
func (c *Client) nextPage(op string, resp *http.Response) (string, error) {
	m := linkNextRE.FindStringSubmatch(resp.Header.Get("Link"))
	if m == nil {
		return "", nil
	}
	if len(m[1]) > maxNextPageURL {
		return "", fmt.Errorf("hub: %s: the next page's URL is over %s: refused", op,
			sizeText(maxNextPageURL))
	}
	u, err := resp.Request.URL.Parse(m[1])
	if err != nil || !sameOrigin(u, c.endpoint) {
		return "", fmt.Errorf("hub: %s: the next page %q is not on the Hub's origin %s: "+
			"not followed, since the token goes with it", op, m[1], origin(c.endpoint))
	}
	return u.String(), nil
}

// batchSize bounds the files of one preupload or LFS batch call.
const batchSize = 100

// Upload modes of preupload.
const (
	modeLFS     = "lfs"
	modeRegular = "regular"
)

// Preupload asks the Hub which of files go through LFS, by its
// .gitattributes, their size and content, from each one's first 512 bytes.
func (c *Client) Preupload(
	ctx context.Context,
	repo, revision string,
	files []File,
) (map[string]string, error) {
	type fileIn struct {
		Path   string `json:"path"`
		Sample string `json:"sample"`
		Size   int64  `json:"size"`
	}
	modes := map[string]string{}
	for start := 0; start < len(files); start += batchSize {
		var in struct {
			Files []fileIn `json:"files"`
		}
		for _, f := range files[start:min(start+batchSize, len(files))] {
			sample, err := readSample(ctx, f)
			if err != nil {
				return nil, err
			}
			encoded := base64.StdEncoding.EncodeToString(sample)
			in.Files = append(in.Files, fileIn{f.Path, encoded, f.Size})
		}
		var out struct {
			Files []struct {
				Path         string `json:"path"`
				UploadMode   string `json:"uploadMode"`
				ShouldIgnore bool   `json:"shouldIgnore"`
			} `json:"files"`
		}
		path := repoPath(repo) + "/preupload/" + url.PathEscape(revision)
		err := c.call(ctx, "preupload to "+repo, http.MethodPost, path, in, &out, maxAnswer)
		if err != nil {
			return nil, err
		}
		done := int64(min(start+batchSize, len(files)))
		report(ctx, Progress{Stage: StageCompare, Done: done, Total: int64(len(files))})
		for _, f := range out.Files {
			if f.UploadMode != modeLFS && f.UploadMode != modeRegular {
				return nil, fmt.Errorf("hub: preupload to %s: upload mode %q of %s "+
					"is neither lfs nor regular", repo, f.UploadMode, f.Path)
			}
			modes[f.Path] = f.UploadMode
		}
	}
	for _, f := range files {
		if modes[f.Path] == "" {
			return nil, fmt.Errorf("hub: preupload to %s: the Hub said nothing of %s", repo, f.Path)
		}
	}
	return modes, nil
}

// readSample is the first 512 bytes of f.
func readSample(ctx context.Context, f File) ([]byte, error) {
	r, err := f.Open(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("hub: reading %s: %w", f.Path, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 512))
	if err != nil {
		return nil, fmt.Errorf("hub: reading %s: %w", f.Path, err)
	}
	return b, nil
}

// Tags reads the tags of repo: name → commit.
func (c *Client) Tags(ctx context.Context, repo string) (map[string]string, error) {
	var out struct {
		Tags []struct {
			Name         string `json:"name"`
			TargetCommit string `json:"targetCommit"`
		} `json:"tags"`
	}
	err := c.call(ctx, "refs of "+repo, http.MethodGet, repoPath(repo)+"/refs", nil, &out,
		maxRefs)
	if err != nil {
		return nil, err
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[t.Name] = t.TargetCommit
	}
	return tags, nil
}

// CreateTag tags commit as tag.
func (c *Client) CreateTag(ctx context.Context, repo, commit, tag, message string) error {
	in := struct {
		Tag     string `json:"tag"`
		Message string `json:"message,omitempty"`
	}{tag, message}
	path := repoPath(repo) + "/tag/" + url.PathEscape(commit)
	return c.call(ctx, "tag "+tag+" of "+repo, http.MethodPost, path, in, nil, maxAnswer)
}

func bytesBody(data []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
