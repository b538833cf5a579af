// Package store is deterministic, create-only object storage for bakes on an
// S3-compatible server, MinIO in development. Every object put whole
// carries the sha256 of its content and reads verify it. An object written
// while it was made, by Upload, is vouched for by the manifest that lists it.
// Credentials never appear in errors or printed configs.
//
// Keys are '/'-separated paths. No key may also be a directory of other keys,
// as "a" is of "a/b": MinIO stores both but lists only one of them.
package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Store reads and writes objects in one bucket. It is safe for concurrent
// use; stores derived with WithBucket share one connection pool.
type Store struct {
	conn   *conn
	bucket string
}

// conn is the connection shared by every Store derived from one Open.
type conn struct {
	cfg Config
	// client retries with backoff, minio-go's default, so that a server
	// restart in the middle of a bake costs a pause, not a failed activity.
	client *minio.Client
	// probe tries once with short timeouts, so that a wrong endpoint fails
	// Open in seconds instead of after a minute of retries.
	probe *minio.Client
	// creds is shared by both clients, so the AWS chain is walked and a
	// role's temporary credentials fetched once, not per client.
	creds *credentials.Credentials
}

// probeTimeout bounds one existence check; a healthy server answers in
// milliseconds.
const probeTimeout = 5 * time.Second

// Open connects to the server and binds the store to bucket, checking that
// the server answers, accepts the credentials and has the bucket.
func Open(ctx context.Context, cfg Config, bucket string) (*Store, error) {
	c, err := newConn(cfg)
	if err != nil {
		return nil, err
	}
	if err := c.checkBucket(ctx, bucket); err != nil {
		return nil, err
	}
	return &Store{conn: c, bucket: bucket}, nil
}

// EnsureBucket creates bucket unless it exists. It is a development helper;
// production buckets are made by whoever runs the server.
func EnsureBucket(ctx context.Context, cfg Config, bucket string) error {
	c, err := newConn(cfg)
	if err != nil {
		return err
	}
	err = c.checkBucket(ctx, bucket)
	if !errors.Is(err, ErrNoBucket) {
		return err
	}
	err = c.client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: c.cfg.Region})
	if minio.ToErrorResponse(err).Code == "BucketAlreadyOwnedByYou" {
		return nil // created concurrently by another process: fine
	}
	return c.classify("create bucket", bucket, "", err)
}

// Bucket is the bucket this store reads and writes.
func (s *Store) Bucket() string { return s.bucket }

// WithBucket is a store on the same connection bound to another bucket,
// checked to exist.
func (s *Store) WithBucket(ctx context.Context, bucket string) (*Store, error) {
	if err := s.conn.checkBucket(ctx, bucket); err != nil {
		return nil, err
	}
	return &Store{conn: s.conn, bucket: bucket}, nil
}

func newConn(cfg Config) (*conn, error) {
	cfg, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	c := &conn{cfg: cfg, creds: cfg.credentials()}
	transport, err := c.transport(false)
	if err != nil {
		return nil, err
	}
	if c.client, err = c.newClient(0, transport); err != nil {
		return nil, err
	}
	probeTransport, err := c.transport(true)
	if err != nil {
		return nil, err
	}
	if c.probe, err = c.newClient(1, probeTransport); err != nil {
		return nil, err
	}
	return c, nil
}

// transport is minio-go's default transport, trusting cfg.CAFile when set;
// the probe's gives up within seconds.
func (c *conn) transport(probe bool) (*http.Transport, error) {
	t, err := minio.DefaultTransport(c.cfg.Secure)
	if err != nil {
		return nil, fmt.Errorf("store: S3 transport: %w", err)
	}
	if probe {
		t.DialContext = (&net.Dialer{Timeout: 2 * time.Second}).DialContext
		t.ResponseHeaderTimeout = probeTimeout
	}
	tc, err := c.cfg.ClientTLS()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if tc != nil {
		t.TLSClientConfig.RootCAs = tc.RootCAs
	}
	if testDial != nil {
		t.DialContext = testDial
		t.DialTLSContext = nil
	}
	return t, nil
}

// testDial replaces the transport's dialer in tests that check which host
// a request names without resolving it, as virtual-host addressing needs.
var testDial func(ctx context.Context, network, addr string) (net.Conn, error)

// newClient builds a minio client; maxRetries 0 keeps minio-go's default.
func (c *conn) newClient(maxRetries int, transport http.RoundTripper) (*minio.Client, error) {
	client, err := minio.New(c.cfg.Endpoint, &minio.Options{
		Creds:        c.creds,
		Secure:       c.cfg.Secure,
		Region:       c.cfg.Region,
		BucketLookup: c.cfg.bucketLookup(),
		MaxRetries:   maxRetries,
		Transport:    transport,
	})
	if err != nil {
		return nil, fmt.Errorf(
			"store: S3 endpoint %q: %s: fix %s",
			c.cfg.Endpoint,
			c.redact(err.Error()),
			endpointHint,
		)
	}
	return client, nil
}

// checkBucket is Open's probe: one quick HEAD on the bucket tells apart an
// unreachable server, rejected credentials and a missing bucket.
func (c *conn) checkBucket(ctx context.Context, bucket string) error {
	if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
		return fmt.Errorf(
			"store: bucket name %q: %v: use 3-63 lowercase letters, digits, dots and hyphens",
			bucket,
			err,
		)
	}
	deadline := time.Now().Add(startupWait)
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		ok, err := c.probeBucket(ctx, bucket)
		switch {
		case starting(err):
		case err != nil:
			return err
		case !ok:
			return c.noBucket(bucket)
		default:
			return nil
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("store: open bucket %s on %s: the server is still starting after %s: "+
				"retry once it has started: %w", bucket, c.cfg.Endpoint, startupWait, errors.Unwrap(err))
		}
		select {
		case <-ctx.Done():
			return c.classify("open bucket", bucket, "", ctx.Err())
		case <-time.After(pause):
		}
	}
}

// startupWait bounds how long Open waits for a server that says it is
// still starting. A worker started beside its MinIO, or just after MinIO
// restarted, then opens its store instead of failing.
var startupWait = 30 * time.Second

// probeBucket is one HEAD on the bucket within probeTimeout.
func (c *conn) probeBucket(ctx context.Context, bucket string) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	ok, err := c.probe.BucketExists(pctx, bucket)
	if err != nil && pctx.Err() != nil && ctx.Err() == nil {
		return false, c.unreachable(fmt.Sprintf("no answer within %s", probeTimeout))
	}
	return ok, c.classify("open bucket", bucket, "", err)
}

// starting reports an answer of a server still bringing up its
// subsystems. MinIO answers 503 with a code naming what is not yet
// initialized: the server, IAM, which checks every key but the root's, or
// bucket metadata.
func starting(err error) bool {
	var resp minio.ErrorResponse
	return errors.As(err, &resp) && resp.StatusCode == http.StatusServiceUnavailable &&
		strings.HasPrefix(resp.Code, "XMinio") && strings.HasSuffix(resp.Code, "NotInitialized")
}
