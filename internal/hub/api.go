package hub

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// repoRE is a Hub repository id: owner/name, each of letters, digits, '-',
// '_' and '.', not starting or ending with '-' or '.' (the Hub's own rule).
var repoRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,94}[A-Za-z0-9])?/[A-Za-z0-9]([A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$`)

// CheckRepoID reports whether id is a repository id the Hub accepts.
func CheckRepoID(id string) error {
	if !repoRE.MatchString(id) || strings.Contains(id, "..") || strings.Contains(id, "--") {
		return fmt.Errorf("%q is not a Hub repository id: write owner/name (your user or organization, then the dataset's name: letters, digits, '-', '_', '.')", id)
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
	err := c.call(ctx, "whoami", http.MethodGet, "/api/whoami-v2", nil, &w)
	return w, err
}

// CreateRepo creates dataset repository repo (private only takes effect
// here, as with huggingface_hub's create_repo). It reports false when the
// repository already exists, which is no error.
func (c *Client) CreateRepo(ctx context.Context, repo string, private bool) (bool, error) {
	owner, name, _ := strings.Cut(repo, "/")
	in := struct {
		Type         string `json:"type"`
		Name         string `json:"name"`
		Organization string `json:"organization"`
		Private      bool   `json:"private"`
	}{"dataset", name, owner, private}
	err := c.call(ctx, "create repo "+repo, http.MethodPost, "/api/repos/create", in, nil)
	if he, ok := err.(*Error); ok && he.Status == http.StatusConflict {
		return false, nil
	}
	return err == nil, err
}

// Head is the commit revision (a branch, tag or commit) points at, and the
// paths of the files it holds (the revision's "siblings").
func (c *Client) Head(ctx context.Context, repo, revision string) (string, []string, error) {
	var info struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			RFilename string `json:"rfilename"`
		} `json:"siblings"`
	}
	if err := c.call(ctx, "read revision "+revision+" of "+repo, http.MethodGet, repoPath(repo)+"/revision/"+url.PathEscape(revision), nil, &info); err != nil {
		return "", nil, err
	}
	if !isHex(info.SHA, 40) {
		return "", nil, fmt.Errorf("hub: revision %s of %s: the Hub answered no commit sha", revision, repo)
	}
	paths := make([]string, len(info.Siblings))
	for i, f := range info.Siblings {
		paths[i] = f.RFilename
	}
	return info.SHA, paths, nil
}

// RemoteFile is a file of a revision, as paths-info describes it.
type RemoteFile struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	OID  string `json:"oid"` // the git blob's sha1 (of the LFS pointer for an LFS file)
	LFS  *struct {
		OID  string `json:"oid"` // sha256 of the content
		Size int64  `json:"size"`
	} `json:"lfs,omitempty"`
}

// PathsInfo describes those of paths that exist at revision (a commit sha
// pins it), keyed by path.
func (c *Client) PathsInfo(ctx context.Context, repo, revision string, paths []string) (map[string]RemoteFile, error) {
	out := map[string]RemoteFile{}
	for start := 0; start < len(paths); start += batchSize {
		form := url.Values{"paths": paths[start:min(start+batchSize, len(paths))], "expand": {"false"}}
		data := []byte(form.Encode())
		resp, err := c.do(ctx, request{op: "paths-info of " + repo, method: http.MethodPost, auth: true,
			url: c.apiURL(repoPath(repo) + "/paths-info/" + url.PathEscape(revision)), contentType: "application/x-www-form-urlencoded",
			size: int64(len(data)), body: bytesBody(data)})
		if err != nil {
			return nil, err
		}
		var list []RemoteFile
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("hub: paths-info of %s: unreadable answer: %w", repo, err)
		}
		for _, f := range list {
			if f.Type == "file" {
				out[f.Path] = f
			}
		}
	}
	return out, nil
}

// batchSize bounds the files of one paths-info, preupload or LFS batch call.
const batchSize = 100

// Upload modes of preupload.
const (
	modeLFS     = "lfs"
	modeRegular = "regular"
)

// Preupload asks the Hub which of files go through LFS (by its
// .gitattributes, their size and content), from each one's first 512 bytes.
func (c *Client) Preupload(ctx context.Context, repo, revision string, files []File) (map[string]string, error) {
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
			in.Files = append(in.Files, fileIn{f.Path, base64.StdEncoding.EncodeToString(sample), f.Size})
		}
		var out struct {
			Files []struct {
				Path         string `json:"path"`
				UploadMode   string `json:"uploadMode"`
				ShouldIgnore bool   `json:"shouldIgnore"`
			} `json:"files"`
		}
		if err := c.call(ctx, "preupload to "+repo, http.MethodPost, repoPath(repo)+"/preupload/"+url.PathEscape(revision), in, &out); err != nil {
			return nil, err
		}
		for _, f := range out.Files {
			if f.UploadMode != modeLFS && f.UploadMode != modeRegular {
				return nil, fmt.Errorf("hub: preupload to %s: upload mode %q of %s is neither lfs nor regular", repo, f.UploadMode, f.Path)
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
	if err := c.call(ctx, "refs of "+repo, http.MethodGet, repoPath(repo)+"/refs", nil, &out); err != nil {
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
	return c.call(ctx, "tag "+tag+" of "+repo, http.MethodPost, repoPath(repo)+"/tag/"+url.PathEscape(commit), in, nil)
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
