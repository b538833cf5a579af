// Package hub pushes a directory of files to a Hugging Face Hub dataset
// repository through the Hub's HTTP API, as huggingface_hub's upload_folder
// does: one commit for the whole directory, large files through the Git LFS
// batch API (basic or multipart transfers), everything streamed so memory is
// bounded by a buffer, not by a file. A push is idempotent (a revision that
// already holds exactly these files gets no new commit) and resumable (LFS
// objects already on the Hub are not sent again). The token is sent to the
// Hub's API only, never to the storage URLs the Hub hands out, and never
// appears in an error.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the public Hub.
const DefaultEndpoint = "https://huggingface.co"

// Client talks to one Hub with one token.
type Client struct {
	endpoint *url.URL
	token    string // "" for anonymous reads (NewReader)
	http     *http.Client
	// noFollow answers a redirect instead of following it: a download
	// follows the Hub's redirect to storage itself, without the token.
	noFollow *http.Client
	// Retries is how many times a call that failed with a 5xx, a 429 or a
	// transport error (no answer at all) is tried again; other answers are
	// final. Waits double from Backoff up to MaxBackoff (or the server's
	// Retry-After, within MaxBackoff).
	Retries             int
	Backoff, MaxBackoff time.Duration
}

// New returns a client of the Hub at endpoint ("" for DefaultEndpoint).
func New(endpoint, token string) (*Client, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if err := CheckEndpoint(endpoint); err != nil {
		return nil, err
	}
	u, _ := url.Parse(strings.TrimSuffix(endpoint, "/"))
	if token == "" {
		return nil, ErrNoToken
	}
	return newClient(u, token), nil
}

func newClient(u *url.URL, token string) *Client {
	return &Client{endpoint: u, token: token, http: &http.Client{},
		noFollow: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		Retries:  5, Backoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second}
}

// CheckEndpoint reports whether endpoint is a Hub base URL the token may
// be sent to: https, or plain http to this machine only (a stand-in or a
// tunnel). Over plain http anyone on the path reads the token.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(strings.TrimSuffix(endpoint, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an http(s) URL of a Hub, such as %s", endpoint, DefaultEndpoint)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("%q is plain http to another host, which would send the Hub token in clear text: use https (plain http only to localhost, 127.0.0.0/8 or ::1)", endpoint)
	}
	return nil
}

// loopback reports whether host names this machine's loopback interface.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Endpoint is the Hub's base URL.
func (c *Client) Endpoint() string { return c.endpoint.String() }

// apiURL is endpoint + path (path segments already escaped).
func (c *Client) apiURL(path string) string { return c.endpoint.String() + path }

// request is one HTTP call, re-playable: body re-opens the payload for each attempt.
type request struct {
	op, method, url string
	auth            bool // send the token: the Hub's API, never a storage URL it hands out
	redirect        bool // a 3xx is an answer (to follow without the token), not followed
	header          map[string]string
	contentType     string
	size            int64 // of the body; -1 unknown (chunked)
	body            func() (io.ReadCloser, error)
}

// jsonBody is a request body of the JSON of v.
func jsonBody(v any) (func() (io.ReadCloser, error), int64, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, 0, err
	}
	return bytesBody(data), int64(len(data)), nil
}

// sourceReader remembers a failure of the payload itself (a file that
// cannot be read, or bytes that do not match their checksum), which no
// retry of the request can fix.
type sourceReader struct {
	r   io.ReadCloser
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *sourceReader) Close() error { return s.r.Close() }

// do runs r until it gets a final answer and returns a 2xx response (the
// caller closes its body) or an error: *Error for an HTTP failure, the
// payload's own error, or the context's.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	wait := c.Backoff
	for attempt := 0; ; attempt++ {
		resp, retryAfter, err := c.once(ctx, r)
		if err == nil {
			return resp, nil
		}
		var he *Error
		retryable := !errors.As(err, &he) || he.Status == http.StatusTooManyRequests || he.Status >= 500
		var fe finalError
		if errors.As(err, &fe) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hub: %s: %w", r.op, ctx.Err())
		}
		if !retryable || attempt >= c.Retries {
			if he != nil && retryable {
				he.Hint = fmt.Sprintf("the Hub kept failing (%d attempts): try again later", attempt+1)
			}
			return nil, err
		}
		d := wait
		if retryAfter > 0 {
			d = retryAfter
		}
		d = min(d, c.MaxBackoff)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
		wait = min(2*wait, c.MaxBackoff)
	}
}

// finalError is a failure on this side that no retry fixes: a payload that
// cannot be read or does not match its checksum, or a URL the Hub handed
// out that is no URL.
type finalError struct{ err error }

func (e finalError) Error() string { return e.err.Error() }
func (e finalError) Unwrap() error { return e.err }

// once is one attempt of r.
func (c *Client) once(ctx context.Context, r request) (*http.Response, time.Duration, error) {
	var body io.ReadCloser
	var src *sourceReader
	if r.body != nil {
		b, err := r.body()
		if err != nil {
			return nil, 0, finalError{err}
		}
		src = &sourceReader{r: b}
		body = src
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, 0, finalError{fmt.Errorf("hub: %s: %w", r.op, err)}
	}
	if body != nil {
		req.ContentLength = r.size
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.auth && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := c.http
	if r.redirect {
		hc = c.noFollow
	}
	resp, err := hc.Do(req)
	if err != nil {
		if src != nil && src.err != nil {
			return nil, 0, finalError{src.err}
		}
		// The token travels in a header only, never in a URL, so a
		// transport error cannot show it.
		return nil, 0, fmt.Errorf("hub: %s: %w", r.op, err)
	}
	if resp.StatusCode/100 == 2 || (r.redirect && resp.StatusCode/100 == 3) {
		return resp, 0, nil
	}
	defer resp.Body.Close()
	return nil, retryAfter(resp), statusError(r.op, resp.StatusCode, c.redact(errorMessage(resp)))
}

// redact removes the token from text the server or the transport produced.
func (c *Client) redact(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[redacted]")
}

// maxErrorBody bounds what is read of a failed answer's body: the Hub's
// explanations are a sentence, and a proxy's error page need not be read
// whole to be shown in part.
const maxErrorBody = 4 << 10

// errorMessage is the Hub's explanation of a failure: its X-Error-Message
// header, the "error" of a JSON body, or the start of the body.
func errorMessage(resp *http.Response) string {
	if m := resp.Header.Get("X-Error-Message"); m != "" {
		return m
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(data))
}

func retryAfter(resp *http.Response) time.Duration {
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// call sends in as JSON (nil: no body) to the Hub's API and decodes the
// answer into out (nil: discarded).
func (c *Client) call(ctx context.Context, op, method, path string, in, out any) error {
	r := request{op: op, method: method, url: c.apiURL(path), auth: true}
	if in != nil {
		body, size, err := jsonBody(in)
		if err != nil {
			return err
		}
		r.body, r.size, r.contentType = body, size, "application/json"
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("hub: %s: unreadable answer: %w", op, err)
	}
	return nil
}
