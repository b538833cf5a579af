// Package hub pushes a directory of files to a Hugging Face Hub dataset
// repository through the Hub's HTTP API, as huggingface_hub's upload_folder
// does: one commit for the whole directory, large files through the Git LFS
// batch API with basic or multipart transfers, everything streamed so memory
// is bounded by a buffer, not by a file. A push is idempotent: a revision
// that already holds exactly these files gets no new commit. It is
// resumable: LFS objects already on the Hub are not sent again. It follows
// the Hub's protocol as the reference clients huggingface_hub and
// @huggingface/hub do: file lists from the paged tree listing, redirects on
// the Hub's origin, the waits a rate limit asks for. The token is sent to
// the Hub's own origin only, never to the storage URLs the Hub hands out nor
// across a redirect elsewhere, and never appears in an error. Every request
// has deadlines, set by Deadlines, and every answer is read up to a cap.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the public Hub.
const DefaultEndpoint = "https://huggingface.co"

// Client talks to one Hub with one token.
type Client struct {
	endpoint *url.URL
	token    string // "" for anonymous reads by NewReader
	// http follows no redirect: do follows the Hub's own on its origin, as
	// for a renamed repository, and a download its redirect to storage,
	// without the token.
	http *http.Client
	// Retries is how many times a call that failed with a 5xx, a 429 or a
	// transport error is tried again. A transport error is no answer at all,
	// or a stall; other answers are final. Waits double from Backoff up to
	// MaxBackoff.
	Retries             int
	Backoff, MaxBackoff time.Duration
	// MaxWait bounds a wait the Hub asks for, a 429's RateLimit t= or a
	// Retry-After: longer ones fail the call at once.
	MaxWait time.Duration
	// Deadlines bound each request; DefaultDeadlines unless set.
	Deadlines Deadlines
}

// New returns a client of the Hub at endpoint; "" is DefaultEndpoint.
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
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{
		endpoint:   u,
		token:      token,
		http:       &http.Client{CheckRedirect: noRedirects},
		Retries:    5,
		Backoff:    500 * time.Millisecond,
		MaxBackoff: 30 * time.Second,
		MaxWait:    10 * time.Minute,
		Deadlines:  DefaultDeadlines,
	}
}

// CheckEndpoint reports whether endpoint is a Hub base URL the token may
// be sent to: https, or plain http to this machine only, for a stand-in or
// a tunnel. Over plain http anyone on the path reads the token.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(strings.TrimSuffix(endpoint, "/"))
	if err != nil ||
		(u.Scheme != "https" && u.Scheme != "http") ||
		u.Host == "" ||
		u.RawQuery != "" ||
		u.Fragment != "" ||
		u.User != nil {
		return fmt.Errorf("%q is not an http(s) URL of a Hub, such as %s",
			endpoint, DefaultEndpoint)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("%q is plain http to another host, which would send the Hub token "+
			"in clear text: use https (plain http only to localhost, 127.0.0.0/8 or ::1)", endpoint)
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

// apiURL is endpoint + path, whose segments are already escaped.
func (c *Client) apiURL(path string) string { return c.endpoint.String() + path }

// request is one HTTP call, re-playable: body re-opens the payload for
// each attempt and for a redirect that keeps the method.
type request struct {
	op, method, url string
	auth            bool // send the token: the Hub's API, never a storage URL it hands out
	redirect        bool // a 3xx is an answer for the caller, not followed here
	header          map[string]string
	contentType     string
	size            int64 // of the body; -1 when unknown, sent chunked
	body            func() (io.ReadCloser, error)
	sent            func(n int64) // told the bytes of the body sent so far in this attempt, if set
}

// jsonBody is a request body of the JSON of v.
func jsonBody(v any) (func() (io.ReadCloser, error), int64, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, 0, err
	}
	return bytesBody(data), int64(len(data)), nil
}

// sourceReader is a request's body on its way out: it remembers a failure
// of the payload itself, a file that cannot be read or bytes that do not
// match their checksum, which no retry of the request can fix. It keeps
// the request's guard informed of whether the wait is on the source or on
// the Hub, and reports the bytes sent.
type sourceReader struct {
	payload   io.ReadCloser
	guard     *guard
	sent      func(int64)
	sentBytes int64
	err       error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	s.guard.arm(phaseSource, s.guard.deadlines.Idle)
	n, err := s.payload.Read(p)
	s.guard.arm(phaseSending, s.guard.deadlines.Idle)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	if s.sentBytes += int64(n); n > 0 && s.sent != nil {
		s.sent(s.sentBytes)
	}
	return n, err
}

func (s *sourceReader) Close() error { return s.payload.Close() }

// maxRedirects bounds the redirects one call follows.
const maxRedirects = 10

// do runs r until it gets a final answer and returns a 2xx response, or a
// 3xx for r.redirect whose body the caller closes, or an error: *Error for
// an HTTP failure, *StallError for a request that stopped moving, the
// payload's own error, or the context's. It follows the Hub's redirects on
// its own origin, as huggingface_hub does for a renamed repository in
// utils/_http.py, _httpx_follow_relative_redirects_with_backoff, and a 307
// or 308 with the same method and body; it refuses one to another origin,
// where the token must not go. A 429 or 5xx that says how long to wait is
// retried after that long, up to MaxWait: RateLimit's t= on a 429, else
// Retry-After, as huggingface_hub's http_backoff reads them.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	wait := c.Backoff
	hops := 0
	for attempt := 0; ; {
		resp, err := c.once(ctx, r)
		var told time.Duration
		if err == nil {
			switch {
			case resp.StatusCode/100 == 2, r.redirect && isRedirect(resp.StatusCode):
				return resp, nil
			case isRedirect(resp.StatusCode):
				if hops++; hops > maxRedirects {
					drain(resp)
					return nil, fmt.Errorf("hub: %s: more than %d redirects", r.op, maxRedirects)
				}
				if r, err = follow(r, resp); err != nil {
					return nil, err
				}
				continue
			}
			told = toldWait(resp)
			err = c.failure(r, resp)
		}
		var fe finalError
		if errors.As(err, &fe) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hub: %s: %w", r.op, ctx.Err())
		}
		var he *Error
		retryable := !errors.As(err, &he) ||
			he.Status == http.StatusTooManyRequests ||
			he.Status >= 500
		switch {
		case !retryable:
			return nil, err
		case told > c.MaxWait:
			he.Hint = fmt.Sprintf("the Hub asks to wait %d s, more than the %s this client waits: "+
				"try again later", told/time.Second, c.MaxWait)
			return nil, err
		case attempt >= c.Retries:
			if he != nil {
				he.Hint = fmt.Sprintf("the Hub kept failing (%d attempts): try again later",
					attempt+1)
			}
			return nil, err
		}
		d := min(wait, c.MaxBackoff)
		if told > 0 {
			// One second more, as huggingface_hub waits, so that a
			// window reset rounded down has passed.
			d = told + time.Second
		}
		report(ctx, Progress{Stage: StageRetry, Retry: err.Error()})
		if err := pause(ctx, r.op, d, told > 0); err != nil {
			return nil, err
		}
		wait = min(2*wait, c.MaxBackoff)
		attempt++
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently,
		http.StatusFound,
		http.StatusSeeOther,
		http.StatusTemporaryRedirect,
		http.StatusPermanentRedirect:
		return true
	}
	return false
}

// follow is r sent where resp redirects it: on the same origin only, with
// the same method and body for a 307 or 308, as a GET for another
// redirect of a GET.
func follow(r request, resp *http.Response) (request, error) {
	drain(resp)
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	switch {
	case err != nil || resp.Header.Get("Location") == "":
		return r, finalError{fmt.Errorf("hub: %s: the Hub answered %s with no usable Location",
			r.op, resp.Status)}
	case resp.StatusCode != http.StatusTemporaryRedirect &&
		resp.StatusCode != http.StatusPermanentRedirect &&
		r.method != http.MethodGet:
		return r, finalError{fmt.Errorf("hub: %s: the Hub answered %s to a %s, "+
			"which only a 307 or 308 may redirect", r.op, resp.Status, r.method)}
	case !sameOrigin(loc, resp.Request.URL):
		return r, finalError{fmt.Errorf("hub: %s: the Hub redirected it to %s, "+
			"another origin (scheme, host or port): not followed, "+
			"since the token goes to the Hub's own origin only; check the endpoint",
			r.op, origin(loc))}
	}
	r.url = loc.String()
	return r, nil
}

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return origin(a) == origin(b)
}

// origin is scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// rateLimitRE is the Hub's RateLimit header: "api";r=0;t=55, the IETF
// draft's form that huggingface_hub's parse_ratelimit_headers reads.
var rateLimitRE = regexp.MustCompile(`"\w+"\s*;\s*r\s*=\s*(\d+)\s*;\s*t\s*=\s*(\d+)`)

// maxTold bounds a told wait before it becomes a Duration, so none overflows.
const maxTold = 1 << 20 // seconds, 12 days

// toldWait is how long the answer asks the client to wait before trying
// again: the RateLimit header's t= on a 429 whose r= says none are left,
// else Retry-After in seconds; 0 when it says nothing.
func toldWait(resp *http.Response) time.Duration {
	secs := 0
	m := rateLimitRE.FindStringSubmatch(resp.Header.Get("RateLimit"))
	retryAfter := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if resp.StatusCode == http.StatusTooManyRequests && m != nil && m[1] == "0" {
		secs, _ = strconv.Atoi(m[2])
	} else if n, err := strconv.Atoi(retryAfter); err == nil {
		secs = n
	}
	return time.Duration(min(max(secs, 0), maxTold)) * time.Second
}

// progressKey carries a push's Progress to the calls deep in it: the
// waits and retries of do, the batches of Preupload.
type progressKey struct{}

// report tells the push that ctx belongs to, if any, of p.
func report(ctx context.Context, p Progress) {
	if f, ok := ctx.Value(progressKey{}).(func(Progress)); ok {
		f(p)
	}
}

// pause waits d, or less if ctx ends. A wait the Hub asked for is reported
// to the push's Progress every second: it is progress the Hub requires, and
// the activity heartbeats on it.
func pause(ctx context.Context, op string, d time.Duration, told bool) error {
	end := time.Now().Add(d)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for left := d; left > 0; left = time.Until(end) {
		if told {
			wait := fmt.Sprintf("%s: the Hub asks to wait, %s left", op, left.Round(time.Second))
			report(ctx, Progress{Stage: StageWait, Wait: wait})
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hub: %s: %w", op, ctx.Err())
		case <-tick.C:
		case <-time.After(left):
		}
	}
	return nil
}

// finalError is a failure on this side that no retry fixes: a payload that
// cannot be read or does not match its checksum, or a URL the Hub handed
// out that is no URL or leads elsewhere.
type finalError struct{ err error }

func (e finalError) Error() string { return e.err.Error() }
func (e finalError) Unwrap() error { return e.err }

// once is one attempt of r, under its deadlines. A 2xx or 3xx answer comes
// back with its body still guarded: reading it must keep moving.
func (c *Client) once(ctx context.Context, r request) (*http.Response, error) {
	u, err := url.Parse(r.url)
	if err != nil || u.Host == "" {
		return nil, finalError{fmt.Errorf("hub: %s: %q is no URL", r.op, r.url)}
	}
	rctx, cancel := context.WithCancelCause(ctx)
	g := &guard{
		deadlines: c.Deadlines,
		cancel:    cancel,
		stall: StallError{
			Op:      r.op,
			Host:    u.Host,
			Storage: !sameOrigin(u, c.endpoint),
		},
	}
	var body io.ReadCloser
	var src *sourceReader
	if r.body != nil {
		b, err := r.body()
		if err != nil {
			cancel(nil)
			return nil, finalError{err}
		}
		src = &sourceReader{payload: b, guard: g, sent: r.sent}
		body = src
	}
	traced := httptrace.WithClientTrace(rctx, g.trace())
	req, err := http.NewRequestWithContext(traced, r.method, r.url, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		cancel(nil)
		return nil, finalError{fmt.Errorf("hub: %s: %w", r.op, err)}
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
	g.arm(phaseConnecting, c.Deadlines.Connect)
	resp, err := c.http.Do(req)
	if err != nil {
		g.stop()
		defer cancel(nil)
		switch {
		case src != nil && src.err != nil && stalled(rctx) == nil:
			return nil, finalError{src.err}
		case stalled(rctx) != nil && ctx.Err() == nil:
			return nil, stalled(rctx)
		}
		// The token travels in a header only, never in a URL, so a
		// transport error cannot show it.
		return nil, fmt.Errorf("hub: %s: %w", r.op, err)
	}
	resp.Body = &guardedBody{
		body:   resp.Body,
		guard:  g,
		ctx:    rctx,
		cancel: cancel,
	}
	return resp, nil
}

// failure is the error of a final or retryable non-2xx answer, which it closes.
// A 401 to a request without a token is the Hub's answer for a repository
// that does not exist or is private, and it does not tell which. So is any
// 401 marked RepoNotFound: not a token problem.
func (c *Client) failure(r request, resp *http.Response) error {
	defer resp.Body.Close()
	e := statusError(r.op, resp.StatusCode, c.redact(errorMessage(resp)))
	anonymous := r.auth && c.token == ""
	if resp.StatusCode == http.StatusUnauthorized &&
		(anonymous || resp.Header.Get("X-Error-Code") == "RepoNotFound") {
		notFoundOrPrivate(e)
	}
	return e
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

// call sends in as JSON to the Hub's API and decodes the answer, of at
// most max bytes, into out. A nil in sends no body; a nil out discards it.
func (c *Client) call(
	ctx context.Context,
	op, method, path string,
	in, out any,
	max int64,
) error {
	r := request{
		op:     op,
		method: method,
		url:    c.apiURL(path),
		auth:   true,
	}
	if in != nil {
		body, size, err := jsonBody(in)
		if err != nil {
			return err
		}
		r.body = body
		r.size = size
		r.contentType = "application/json"
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if out == nil {
		drain(resp)
		return nil
	}
	defer resp.Body.Close()
	return decodeAnswer(op, resp.Body, max, out)
}
