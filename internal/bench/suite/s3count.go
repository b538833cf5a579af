package suite

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// s3Counter is a reverse proxy in front of MinIO that counts what passes
// through it: the workers and the starter are pointed at it instead of at
// MinIO, so every S3 request of a bake is counted, whichever process makes
// it, without a hook in the store code.
type s3Counter struct {
	addr string
	srv  *http.Server
	// requests, and the bytes of request bodies to S3 and of response
	// bodies from S3. A HEAD answered 404 is not counted: that is a
	// merge beside its split asking whether the next slice is committed
	// yet, as often as the slices' timing makes it, which is no work of the
	// bake's; docs/benchmarks.md explains.
	requests, bytesUp, bytesDown atomic.Int64
}

// startS3Counter proxies a free loopback port to the S3 endpoint target
// host:port, in plain HTTP as the dev stack serves it.
func startS3Counter(target string) (*s3Counter, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &s3Counter{addr: l.Addr().String()}
	u := &url.URL{Scheme: "http", Host: target}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			// Clients sign the Host header they send with SigV4, and it names
			// the proxy; MinIO must check the signature against that host.
			r.Out.Host = r.In.Host
		},
		Transport: counting{c},
	}
	c.srv = &http.Server{Handler: proxy}
	go func() { _ = c.srv.Serve(l) }()
	return c, nil
}

func (c *s3Counter) reset() {
	c.requests.Store(0)
	c.bytesUp.Store(0)
	c.bytesDown.Store(0)
}

func (c *s3Counter) close() error { return c.srv.Shutdown(context.Background()) }

// counting is the proxy's RoundTripper: it counts each request and the
// bytes of both bodies as they stream through.
type counting struct{ counter *s3Counter }

func (t counting) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		// The outgoing request keeps its ContentLength, so wrapping the
		// body changes nothing on the wire.
		req.Body = &countingBody{ReadCloser: req.Body, count: &t.counter.bytesUp}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.counter.requests.Add(1)
		return nil, err
	}
	if req.Method != http.MethodHead || resp.StatusCode != http.StatusNotFound {
		t.counter.requests.Add(1)
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, count: &t.counter.bytesDown}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	count *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.count.Add(int64(n))
	return n, err
}
