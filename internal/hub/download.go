package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/readlimit"
)

// NewReader returns a client that reads from the Hub at endpoint, "" for
// DefaultEndpoint; token may be "" for public repositories.
func NewReader(endpoint, token string) (*Client, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if err := CheckEndpoint(endpoint); err != nil {
		return nil, err
	}
	u, _ := url.Parse(strings.TrimSuffix(endpoint, "/"))
	return newClient(u, token), nil
}

// URIScheme prefixes a Hub dataset reference: hf://OWNER/NAME[@REVISION].
const URIScheme = "hf://"

// ParseURI splits hf://OWNER/NAME[@REVISION] into the repository id and the
// revision, "main" when none is named. ok is false for anything that does
// not start with hf://; a malformed reference after it is an error.
func ParseURI(s string) (repo, revision string, ok bool, err error) {
	rest, ok := strings.CutPrefix(s, URIScheme)
	if !ok {
		return "", "", false, nil
	}
	repo, revision, hasRev := strings.Cut(rest, "@")
	if hasRev && revision == "" {
		return "", "", true, fmt.Errorf("%q names no revision after '@': "+
			"write hf://owner/name@revision (a branch, tag or commit)", s)
	}
	if !hasRev {
		revision = "main"
	}
	if err := CheckRepoID(repo); err != nil {
		return "", "", true, err
	}
	return repo, revision, true, nil
}

// ReadFile returns file p of repo at revision, refusing one over max bytes
// after reading max + 1: the Hub's answer is not trusted to be the size of
// the document asked for.
func (c *Client) ReadFile(ctx context.Context, repo, revision, p string, max int64) ([]byte, error) {
	body, _, err := c.openFile(ctx, repo, revision, p, 0)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := readCapped(body, max)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, fmt.Errorf("hub: %s of %s@%s is over %s, the most read of it: "+
			"it is not a dataset's %s", p, repo, revision, sizeText(max), p)
	case err != nil:
		return nil, fmt.Errorf("hub: reading %s of %s@%s: %w", p, repo, revision, err)
	}
	return data, nil
}

// ReadMetadata returns the metadata.json of repo at revision, as `dataset
// info` reads it: at most dataset.MaxMetadataBytes, the cap of a local
// one, parsed as a local one is. dataset.ParseMetadata counts its tokens
// first.
func (c *Client) ReadMetadata(ctx context.Context, repo, revision string) (dataset.Metadata, error) {
	data, err := c.ReadFile(ctx, repo, revision, metadataPath, dataset.MaxMetadataBytes)
	if err != nil {
		return nil, err
	}
	return dataset.ParseMetadata(data, URIScheme+repo+"@"+revision)
}

// openFile GETs file p of repo at revision from byte offset, through the
// resolve URL and the redirects it answers. On the Hub's own origin, for a
// renamed repository or storage the Hub serves itself, it sends the token;
// to another origin, the storage of an LFS file, it does not, and never
// again once it was dropped, as fetch and httpx strip it. start is where
// the body begins: offset, or 0 when the server sent the whole file.
func (c *Client) openFile(
	ctx context.Context,
	repo, revision, p string,
	offset int64,
) (io.ReadCloser, int64, error) {
	owner, name, _ := strings.Cut(repo, "/")
	var segs []string
	for _, s := range strings.Split(p, "/") {
		segs = append(segs, url.PathEscape(s))
	}
	resolve := "/datasets/" + url.PathEscape(owner) + "/" + url.PathEscape(name) +
		"/resolve/" + url.PathEscape(revision) + "/" + strings.Join(segs, "/")
	r := request{
		op:       "download " + p + " of " + repo,
		method:   http.MethodGet,
		auth:     true,
		redirect: true,
		header:   map[string]string{},
		url:      c.apiURL(resolve),
	}
	if offset > 0 {
		r.header["Range"] = "bytes=" + strconv.FormatInt(offset, 10) + "-"
	}
	for hop := 0; ; hop++ {
		resp, err := c.do(ctx, r)
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode/100 != 3 {
			if offset > 0 && resp.StatusCode != http.StatusPartialContent {
				return resp.Body, 0, nil // the whole file: start again
			}
			return resp.Body, offset, nil
		}
		drain(resp)
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		switch {
		case err != nil || (loc.Scheme != "https" && loc.Scheme != "http") || loc.Host == "":
			return nil, 0, fmt.Errorf("hub: %s: the Hub redirected to %q, which is no http(s) URL",
				r.op, resp.Header.Get("Location"))
		case hop == maxRedirects:
			return nil, 0, fmt.Errorf("hub: %s: more than %d redirects", r.op, maxRedirects)
		}
		r.auth = r.auth && sameOrigin(loc, resp.Request.URL)
		r.url = loc.String()
		if !sameOrigin(loc, c.endpoint) {
			r.op = "download " + p + " of " + repo + " (storage)"
		}
	}
}

// DownloadOptions says what to download and where.
type DownloadOptions struct {
	Repo     string
	Revision string // branch, tag or commit; "" for main
	// Split, when set, keeps only data/<Split>-*.parquet, metadata.json
	// and README.md, as whestbench's download --split does.
	Split string
	// Keep, when set, fetches only the files of the revision it returns
	// true for; `dataset compare` reads metadata.json and data/ only. The
	// staging folder does not record it: give such a download an Output of
	// its own, never one an unfiltered download was interrupted in.
	Keep func(path string) bool
	// Output is the directory to create. Files are written into a folder
	// beside it, StagingDir, and it is renamed to Output once every file
	// has been checked; a download interrupted before that resumes there.
	Output string
	// Check, when set, judges the whole download in the staging folder
	// before it becomes Output: a dataset download checks with
	// dataset.CheckFetched that what the listing gave is a complete dataset.
	Check    func(dir string) error
	Progress func(DownloadProgress)
}

// DownloadProgress reports bytes as they arrive.
type DownloadProgress struct {
	Path              string
	Done, Total       int64 // of all the files, bytes
	FilesDone, NFiles int
}

// DownloadResult is a finished download.
type DownloadResult struct {
	Commit string
	Files  int
	Bytes  int64
	// Resumed counts the files an earlier, interrupted run had finished and
	// bytes it had fetched of an unfinished one.
	Resumed      int
	ResumedBytes int64
}

// StagingDir is where a download into output writes before it renames the
// folder to output.
func StagingDir(output string) string {
	output = filepath.Clean(output)
	return filepath.Join(filepath.Dir(output), "."+filepath.Base(output)+".hf-download")
}

// downloadState marks a staging folder as a download of one commit, so
// that a re-run resumes it only for the same files.
type downloadState struct {
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
	Split  string `json:"split"`
}

const (
	stateFile        = ".hf-download.json"
	incompleteSuffix = ".incomplete"
)

// remoteFile is one file to fetch, with what the Hub says it is.
type remoteFile struct {
	path string
	size int64
	lfs  bool
	oid  string // sha256 of an LFS file's content; else its git blob sha1
}

// Download fetches a dataset repository's files at a revision into
// o.Output, checking every LFS file against its sha256 and every regular
// file against its git blob sha1, the oids the Hub lists, and reading no
// more of a file than the size the Hub lists. Nothing appears at o.Output
// until every file has checked out.
func (c *Client) Download(ctx context.Context, o DownloadOptions) (DownloadResult, error) {
	var res DownloadResult
	if o.Revision == "" {
		o.Revision = "main"
	}
	if err := dataset.CheckOutputFree(o.Output); err != nil {
		return res, err
	}
	sha, err := c.Head(ctx, o.Repo, o.Revision)
	if err != nil {
		return res, err
	}
	res.Commit = sha
	listed, err := c.Tree(ctx, o.Repo, sha)
	if err != nil {
		return res, err
	}
	files, err := selectFiles(listed, o)
	if err != nil {
		return res, err
	}
	staging := StagingDir(o.Output)
	state := downloadState{Repo: o.Repo, Commit: sha, Split: o.Split}
	if err := prepareStaging(staging, state); err != nil {
		return res, err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	p := DownloadProgress{Total: total, NFiles: len(files)}
	for _, f := range files {
		p.Path = f.path
		resumed, err := c.fetch(ctx, o, sha, staging, f, &p)
		if err != nil {
			return res, err
		}
		if resumed > 0 {
			res.Resumed++
			res.ResumedBytes += resumed
		}
		p.FilesDone++
		res.Files++
		res.Bytes += f.size
	}
	if o.Check != nil {
		if err := o.Check(staging); err != nil {
			return res, fmt.Errorf("hf://%s@%s: %w", o.Repo, o.Revision, err)
		}
	}
	if err := os.Remove(filepath.Join(staging, stateFile)); err != nil {
		return res, err
	}
	if err := dataset.CheckOutputFree(o.Output); err != nil {
		return res, err
	}
	if err := os.Rename(staging, o.Output); err != nil {
		return res, fmt.Errorf("hub: moving the download into %s: %w", o.Output, err)
	}
	return res, nil
}

// selectFiles is the revision's files to fetch, checked: all of them, or
// with a split whestbench's selection. Every path must be a plain
// relative path: the listing comes from the Hub and is not trusted to stay
// inside Output, so a name that would not is refused before anything is
// written.
func selectFiles(listed []RemoteFile, o DownloadOptions) ([]remoteFile, error) {
	var out []remoteFile
	parquets := 0
	// The split's shards by their exact names: whestbench's glob
	// data/<split>-*.parquet would also take my-custom-split's for "my".
	shard := regexp.MustCompile(`^data/` + regexp.QuoteMeta(o.Split) +
		`-[0-9]{5}-of-[0-9]{5}\.parquet$`)
	for _, f := range listed {
		p := f.Path
		if !localPath(p) {
			return nil, fmt.Errorf("hub: %s@%s lists a file named %q, "+
				"which cannot be written inside --output "+
				"(empty, absolute, \".\" or \"..\", a path that is not clean or leaves "+
				"the folder, or a name this download uses): nothing was downloaded",
				o.Repo, o.Revision, p)
		}
		switch {
		case o.Keep != nil && !o.Keep(p):
			continue
		case o.Split == "" || p == metadataPath || p == cardPath:
		case shard.MatchString(p):
			parquets++
		default:
			continue
		}
		rf, err := checkListed(o.Repo, f)
		if err != nil {
			return nil, err
		}
		out = append(out, rf)
	}
	if o.Split != "" && parquets == 0 {
		var splits []string
		for _, f := range listed {
			name, ok := strings.CutPrefix(f.Path, "data/")
			if ok && strings.HasSuffix(name, ".parquet") {
				splits = append(splits, name)
			}
		}
		return nil, fmt.Errorf("--split %q matched no parquet files in %s@%s "+
			"(its data/ holds %q); name one of its splits", o.Split, o.Repo, o.Revision, splits)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hub: %s@%s holds no files", o.Repo, o.Revision)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// localPath reports whether p, a path the Hub lists, names a file inside
// a folder: relative, clean, no "." or ".." anywhere, no backslash, and not
// a name the download itself uses beside the files.
func localPath(p string) bool {
	return p != "." &&
		filepath.IsLocal(filepath.FromSlash(p)) &&
		path.Clean(p) == p &&
		!strings.Contains(p, `\`) &&
		!strings.HasSuffix(p, incompleteSuffix) &&
		p != stateFile
}

// checkListed is f as the download fetches it, its size and oids checked
// to be well formed.
func checkListed(repo string, f RemoteFile) (remoteFile, error) {
	if f.LFS != nil {
		if !isHex(f.LFS.OID, 64) || f.LFS.Size < 0 {
			return remoteFile{}, fmt.Errorf("hub: the listing of %s: LFS file %s has oid %q "+
				"and size %d, not a sha256 and a size", repo, f.Path, f.LFS.OID, f.LFS.Size)
		}
		return remoteFile{
			path: f.Path,
			size: f.LFS.Size,
			lfs:  true,
			oid:  f.LFS.OID,
		}, nil
	}
	if !isHex(f.OID, 40) || f.Size < 0 {
		return remoteFile{}, fmt.Errorf("hub: the listing of %s: file %s has oid %q "+
			"and size %d, not a git blob sha1 and a size", repo, f.Path, f.OID, f.Size)
	}
	return remoteFile{path: f.Path, size: f.Size, oid: f.OID}, nil
}

// removeOrChooseOutput is the advice for an --output that is not an
// interrupted download.
const removeOrChooseOutput = "remove it or choose another --output"

// prepareStaging makes the staging folder for st, keeping an interrupted
// download of the same commit and files, and replacing one of another.
// A folder there that no download made is refused, not removed.
func prepareStaging(dir string, st downloadState) error {
	// The state file is ours and a few hundred bytes; a folder that holds
	// something else under its name is not an interrupted download.
	data, err := readlimit.File(filepath.Join(dir, stateFile), maxStateFile)
	if tooLarge := (*readlimit.TooLargeError)(nil); errors.As(err, &tooLarge) {
		return fmt.Errorf("%s holds a %s %s: it is not an interrupted download; "+
			removeOrChooseOutput, dir, stateFile, tooLarge)
	}
	switch {
	case err == nil:
		var old downloadState
		if json.Unmarshal(data, &old) == nil && old == st {
			return nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Lstat(dir); err == nil {
			return fmt.Errorf("%s exists and is not an interrupted download (no %s): "+
				removeOrChooseOutput, dir, stateFile)
		}
	default:
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err = json.Marshal(st)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stateFile), data, 0o644)
}

// maxStateFile bounds the read of a staging folder's state file.
const maxStateFile = 64 << 10

// errChecksum is a file whose bytes are not the ones the Hub listed.
var errChecksum = errors.New("checksum mismatch")

// fetch makes staging/f.path: kept when an earlier run finished it and it
// still checks out, else fetched into f.path.incomplete from where that
// ends, checked, and renamed. It returns the bytes an earlier run had.
func (c *Client) fetch(
	ctx context.Context,
	o DownloadOptions,
	sha, staging string,
	f remoteFile,
	p *DownloadProgress,
) (int64, error) {
	final := filepath.Join(staging, filepath.FromSlash(f.path))
	if st, err := os.Stat(final); err == nil && st.Size() == f.size {
		if checkFile(final, f) == nil {
			c.report(o, p, f.size)
			return f.size, nil
		}
		if err := os.Remove(final); err != nil {
			return 0, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return 0, err
	}
	part := final + incompleteSuffix
	out, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if have > f.size { // not a prefix of this file: start again
		if err := out.Truncate(0); err != nil {
			return 0, err
		}
		if have, err = out.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
	}
	resumed := have
	c.report(o, p, have)
	wait := c.Backoff
	for attempt := 0; have < f.size; attempt++ {
		err := c.fetchFrom(ctx, o.Repo, sha, f, out, &have, func(n int64) { c.report(o, p, n) })
		if err == nil {
			break
		}
		resumable := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrStalled)
		if ctx.Err() != nil || attempt >= c.Retries || !resumable {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, c.MaxBackoff)
	}
	if err := out.Sync(); err != nil {
		return 0, err
	}
	if err := out.Close(); err != nil {
		return 0, err
	}
	if err := checkFile(part, f); err != nil {
		os.Remove(part) // a re-run fetches it anew
		return 0, err
	}
	return resumed, os.Rename(part, final)
}

// fetchFrom appends the rest of f from byte *have to out, advancing *have
// and calling wrote as bytes land. A body that ends early is
// io.ErrUnexpectedEOF and one that stops moving a *StallError; either is
// tried again from *have. One longer than f.size is refused.
func (c *Client) fetchFrom(
	ctx context.Context,
	repo, sha string,
	f remoteFile,
	out *os.File,
	have *int64,
	wrote func(int64),
) error {
	body, start, err := c.openFile(ctx, repo, sha, f.path, *have)
	if err != nil {
		return err
	}
	defer body.Close()
	if start != *have {
		if err := out.Truncate(start); err != nil {
			return err
		}
		if _, err := out.Seek(start, io.SeekStart); err != nil {
			return err
		}
		wrote(start - *have)
		*have = start
	}
	n, err := io.Copy(countingWriter{out, wrote}, io.LimitReader(body, f.size-*have+1))
	*have += n
	switch {
	case *have > f.size:
		return fmt.Errorf("hub: %s of %s: the Hub sent more than the %d bytes it lists",
			f.path, repo, f.size)
	case errors.Is(err, ErrStalled):
		return err // names the file and the host; retried from *have, like a cut
	case err != nil && !isCut(err):
		return fmt.Errorf("hub: %s of %s: %w", f.path, repo, err)
	case *have < f.size:
		return fmt.Errorf("hub: %s of %s: the answer ended at byte %d of %d: %w",
			f.path, repo, *have, f.size, io.ErrUnexpectedEOF)
	}
	return nil
}

// countingWriter tells wrote how many bytes each write put down.
type countingWriter struct {
	dst   io.Writer
	wrote func(int64)
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.dst.Write(p)
	c.wrote(int64(n))
	return n, err
}

// isCut is a connection that ended mid-body.
func isCut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) ||
		strings.Contains(err.Error(), "connection reset")
}

// checkFile hashes the file at p as the Hub identifies f: sha256 of the
// content for LFS, git's blob sha1 otherwise.
func checkFile(p string, f remoteFile) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	var h hash.Hash
	if f.lfs {
		h = sha256.New()
	} else {
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", f.size)
	}
	n, err := io.Copy(h, in)
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != f.size || got != f.oid {
		kind := "git blob sha1"
		if f.lfs {
			kind = "sha256"
		}
		return fmt.Errorf("hub: %s: %d bytes with %s %s, the Hub lists %d bytes with %s: %w",
			f.path, n, kind, got, f.size, f.oid, errChecksum)
	}
	return nil
}

func (c *Client) report(o DownloadOptions, p *DownloadProgress, n int64) {
	p.Done += n
	if o.Progress != nil && n != 0 {
		o.Progress(*p)
	}
}
