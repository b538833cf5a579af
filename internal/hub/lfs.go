package hub

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// lfsMediaType is the Git LFS batch API's content type.
const lfsMediaType = "application/vnd.git-lfs+json"

type lfsAction struct {
	Href   string            `json:"href"`
	Header map[string]string `json:"header"`
}

type lfsObject struct {
	OID     string `json:"oid"`
	Size    int64  `json:"size"`
	Actions *struct {
		Upload *lfsAction `json:"upload"`
		Verify *lfsAction `json:"verify"`
	} `json:"actions,omitempty"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// uploadLFS sends the objects of files the Hub does not have yet and
// returns how many it sent and how many it already had. An object whose
// batch answer has no upload action is stored already: by an earlier push,
// another file, or an attempt that crashed after sending it. An object
// under several paths, as two splits with the same rows have, is one
// object: asked for and sent once.
func (c *Client) uploadLFS(
	ctx context.Context,
	repo, revision string,
	files []File,
	progress func(Progress),
) (sent, had int, err error) {
	var objects []File
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f.SHA256] {
			seen[f.SHA256] = true
			objects = append(objects, f)
		}
	}
	for _, chunk := range lfsBatches(objects) {
		transfer, answers, err := c.lfsBatch(ctx, repo, revision, chunk)
		if err != nil {
			return sent, had, err
		}
		for _, f := range chunk {
			o := answers[f.SHA256]
			switch {
			case o.Error != nil:
				return sent, had, statusError("LFS upload of "+f.Path,
					o.Error.Code, o.Error.Message)
			case o.Actions == nil || o.Actions.Upload == nil:
				had++
				progress(Progress{Stage: StageUpload, File: f.Path, Done: f.Size, Total: f.Size})
				continue
			}
			if err := c.sendObject(ctx, transfer, f, o, progress); err != nil {
				return sent, had, err
			}
			sent++
		}
	}
	return sent, had, nil
}

// batchBytes bounds the objects one batch asks for, in bytes: the answer
// lists a presigned URL per part of a multipart object, about a KiB each,
// so that 8 GiB in the Hub's parts of a few MiB answer in a few MiB, well
// under maxBatchAnswer. A larger object is a batch alone: S3 takes at most
// 10,000 parts, 10 MiB of URLs.
const batchBytes = 8 << 30

// lfsBatches cuts objects into batches of at most batchSize objects and
// batchBytes bytes, an object larger than that alone.
func lfsBatches(objects []File) [][]File {
	var out [][]File
	var bytes int64
	for i, f := range objects {
		n := len(out)
		if i == 0 || len(out[n-1]) == batchSize || bytes+f.Size > batchBytes {
			out = append(out, nil)
			n++
			bytes = 0
		}
		out[n-1] = append(out[n-1], f)
		bytes += f.Size
	}
	return out
}

// lfsBatch asks the Hub's LFS batch API how to upload objects: the
// transfer it chose and its answer for each object, by sha256. An answer
// that leaves an object out is refused.
func (c *Client) lfsBatch(
	ctx context.Context,
	repo, revision string,
	objects []File,
) (string, map[string]lfsObject, error) {
	owner, name, _ := strings.Cut(repo, "/")
	type obj struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	in := struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		Objects   []obj    `json:"objects"`
		HashAlgo  string   `json:"hash_algo"`
		Ref       struct {
			Name string `json:"name"`
		} `json:"ref"`
	}{Operation: "upload", Transfers: []string{"basic", "multipart"}, HashAlgo: "sha256"}
	// The branch's name, as huggingface_hub's lfs.py post_lfs_batch_info
	// and @huggingface/hub's commit.ts send it.
	in.Ref.Name = revision
	for _, f := range objects {
		in.Objects = append(in.Objects, obj{f.SHA256, f.Size})
	}
	body, size, err := jsonBody(in)
	if err != nil {
		return "", nil, err
	}
	op := "LFS batch of " + repo
	resp, err := c.do(ctx, request{
		op:     op,
		method: http.MethodPost,
		url: c.apiURL("/datasets/" + url.PathEscape(owner) + "/" + url.PathEscape(name) +
			".git/info/lfs/objects/batch"),
		auth:        true,
		header:      map[string]string{"Accept": lfsMediaType},
		contentType: lfsMediaType,
		size:        size,
		body:        body,
	})
	if err != nil {
		return "", nil, err
	}
	var out struct {
		Transfer string      `json:"transfer"`
		Objects  []lfsObject `json:"objects"`
	}
	err = decodeAnswer(op, resp.Body, maxBatchAnswer, &out)
	resp.Body.Close()
	if err != nil {
		return "", nil, err
	}
	answers := map[string]lfsObject{}
	for _, o := range out.Objects {
		answers[o.OID] = o
	}
	for _, f := range objects {
		if _, ok := answers[f.SHA256]; !ok {
			return "", nil, fmt.Errorf("hub: %s: the Hub said nothing of %s (sha256 %s)",
				op, f.Path, f.SHA256)
		}
	}
	return out.Transfer, answers, nil
}

// sendObject uploads one object by the batch's transfer and verifies it.
func (c *Client) sendObject(
	ctx context.Context,
	transfer string,
	f File,
	o lfsObject,
	progress func(Progress),
) error {
	up := o.Actions.Upload
	_, multipart := up.Header["chunk_size"]
	switch {
	case transfer == "multipart" && multipart:
		if err := c.sendParts(ctx, f, up, progress); err != nil {
			return err
		}
	case transfer == "basic" || transfer == "" || transfer == "multipart":
		// A multipart answer without chunk_size is a single PUT, as in huggingface_hub.
		resp, err := c.do(ctx, request{
			op:     "upload of " + f.Path,
			method: http.MethodPut,
			url:    up.Href,
			header: up.Header,
			size:   f.Size,
			body:   func() (io.ReadCloser, error) { return f.Open(ctx, 0) },
			sent: func(n int64) {
				progress(Progress{
					Stage: StageUpload,
					File:  f.Path,
					Done:  n,
					Total: f.Size,
				})
			},
		})
		if err != nil {
			return err
		}
		drain(resp)
	default:
		return fmt.Errorf("hub: upload of %s: the Hub chose transfer %q, "+
			"which is neither basic nor multipart", f.Path, transfer)
	}
	if v := o.Actions.Verify; v != nil {
		body, size, err := jsonBody(struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		}{f.SHA256, f.Size})
		if err != nil {
			return err
		}
		resp, err := c.do(ctx, request{
			op:          "verify of " + f.Path,
			method:      http.MethodPost,
			url:         v.Href,
			header:      v.Header,
			auth:        true,
			contentType: lfsMediaType,
			size:        size,
			body:        body,
		})
		if err != nil {
			return err
		}
		drain(resp)
	}
	return nil
}

// sendParts is the multipart transfer: the header's numbered entries are
// presigned part URLs, each taking chunk_size bytes and the last one the
// rest; the upload's href completes it with every part's ETag.
func (c *Client) sendParts(
	ctx context.Context,
	f File,
	up *lfsAction,
	progress func(Progress),
) error {
	chunk, numbers, urls, err := partPlan(f, up)
	if err != nil {
		return err
	}
	parts := make([]lfsPart, 0, len(numbers))
	for i, n := range numbers {
		etag, err := c.sendPart(ctx, f, urls[n], n, int64(i)*chunk, chunk, progress)
		if err != nil {
			return err
		}
		parts = append(parts, lfsPart{n, etag})
	}
	body, size, err := jsonBody(struct {
		OID   string    `json:"oid"`
		Parts []lfsPart `json:"parts"`
	}{f.SHA256, parts})
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, request{
		op:          "completion of " + f.Path,
		method:      http.MethodPost,
		url:         up.Href,
		header:      map[string]string{"Accept": lfsMediaType},
		contentType: lfsMediaType,
		size:        size,
		body:        body,
	})
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// lfsPart is a sent part as the completion lists it.
type lfsPart struct {
	PartNumber int    `json:"partNumber"`
	ETag       string `json:"etag"`
}

// partPlan is the part size the Hub asks for, its part numbers in order,
// checked to be 1 to the count f's size needs, and each part's URL.
func partPlan(f File, up *lfsAction) (int64, []int, map[int]string, error) {
	chunk, err := strconv.ParseInt(up.Header["chunk_size"], 10, 64)
	if err != nil || chunk <= 0 {
		return 0, nil, nil, fmt.Errorf("hub: upload of %s: the Hub's chunk_size %q "+
			"is not a positive number", f.Path, up.Header["chunk_size"])
	}
	urls := map[int]string{}
	var numbers []int
	for k, v := range up.Header {
		if n, err := strconv.Atoi(k); err == nil {
			urls[n] = v
			numbers = append(numbers, n)
		}
	}
	sort.Ints(numbers)
	want := (f.Size + chunk - 1) / chunk
	if int64(len(numbers)) != want ||
		(len(numbers) > 0 && numbers[len(numbers)-1] != len(numbers)) {
		return 0, nil, nil, fmt.Errorf("hub: upload of %s: the Hub offered parts %v "+
			"for %d bytes in parts of %d, want 1 to %d", f.Path, numbers, f.Size, chunk, want)
	}
	return chunk, numbers, urls, nil
}

// sendPart PUTs part n of f, the chunk bytes from off, to url and returns
// the storage's ETag for it.
func (c *Client) sendPart(
	ctx context.Context,
	f File,
	url string,
	n int,
	off, chunk int64,
	progress func(Progress),
) (string, error) {
	partSize := min(chunk, f.Size-off)
	resp, err := c.do(ctx, request{
		op:     fmt.Sprintf("upload of %s part %d", f.Path, n),
		method: http.MethodPut,
		url:    url,
		size:   partSize,
		sent: func(n int64) {
			progress(Progress{Stage: StageUpload, File: f.Path, Done: off + n, Total: f.Size})
		},
		body: func() (io.ReadCloser, error) {
			r, err := f.Open(ctx, off)
			if err != nil {
				return nil, err
			}
			return struct {
				io.Reader
				io.Closer
			}{io.LimitReader(r, partSize), r}, nil
		},
	})
	if err != nil {
		return "", err
	}
	etag := resp.Header.Get("ETag")
	drain(resp)
	if etag == "" {
		return "", fmt.Errorf("hub: upload of %s part %d: the storage answered no ETag", f.Path, n)
	}
	return etag, nil
}

// drain discards what is left of an answer, up to maxAnswer, and closes
// it. Past maxAnswer the connection is dropped rather than read.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
}
