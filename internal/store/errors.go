package store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/whestbake/whestbake/internal/tlsconf"
)

// Sentinel errors; every error this package returns for these cases wraps one,
// so callers test with errors.Is.
var (
	// ErrExists: a create-only put found the key already taken.
	ErrExists = errors.New("object already exists")
	// ErrNotFound: no object at the key.
	ErrNotFound = errors.New("object not found")
	// ErrAuth: the server rejected the credentials or denied access.
	ErrAuth = errors.New("S3 credentials rejected")
	// ErrNoBucket: the bucket does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrUnreachable: the server did not answer at all; a retry may help.
	ErrUnreachable = errors.New("S3 endpoint unreachable")
	// ErrCorrupt: the bytes read back do not hash to the sha256 recorded at put time.
	ErrCorrupt = errors.New("object content does not match its recorded sha256")
	// ErrTLS: the TLS settings do not fit the server; a retry cannot help.
	ErrTLS = errors.New("S3 TLS misconfigured")
	// ErrTooLarge: the object is larger than GetMax or GetFile allows; it
	// was not read beyond that.
	ErrTooLarge = errors.New("object larger than allowed")
	// ErrSourceChanged: a copy's source was replaced while it was being
	// copied, so S3 refused a ServerCopy part under x-amz-copy-source-if-match.
	ErrSourceChanged = errors.New("copy source changed during the copy")
)

// tlsKeys name the S3 TLS settings in TLS explanations.
var tlsKeys = tlsconf.Keys{Enable: "s3.secure (or https:// in s3.endpoint)", CA: caHint}

// authCodes are the S3 error codes that mean "these credentials do not work
// here"; AccessDenied is what a HEAD request with a bad signature yields.
var authCodes = map[string]bool{
	"AccessDenied":          true,
	"InvalidAccessKeyId":    true,
	"SignatureDoesNotMatch": true,
	"InvalidToken":          true,
	"ExpiredToken":          true,
}

// classify turns a minio-go error into one of ours: a wrapped sentinel with
// a message that says what to fix, or the original error with the secret
// scrubbed from its text. key is empty for bucket-level operations.
func (c *conn) classify(op, bucket, key string, err error) error {
	if err == nil {
		return nil
	}
	where := bucket
	if key != "" {
		where += "/" + key
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("store: %s %s: %w", op, where, err) // the caller's own deadline
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == minio.NoSuchKey:
		return fmt.Errorf("store: %s %s: %w", op, where, ErrNotFound)
	case resp.Code == minio.NoSuchBucket:
		return c.noBucket(bucket)
	case resp.Code == minio.PreconditionFailed:
		return fmt.Errorf("store: %s %s: %w", op, where, ErrExists)
	case authCodes[resp.Code]:
		return fmt.Errorf("store: %s %s on %s: the server answered %s to %s: fix %s: %w",
			op, where, c.cfg.Endpoint, resp.Code, c.credentialSource(), credsHint, ErrAuth)
	}
	if msg := c.tlsMismatch(err); msg != "" {
		return fmt.Errorf("store: %s %s on %s: %s: %w", op, where, c.cfg.Endpoint, msg, ErrTLS)
	}
	if minio.IsNetworkOrHostDown(err, true) {
		return c.unreachable(c.redact(err.Error()))
	}
	return fmt.Errorf("store: %s %s: %w", op, where, scrubbed{msg: c.redact(err.Error()), err: err})
}

// credentialSource says which credentials the server turned down.
func (c *conn) credentialSource() string {
	if c.cfg.AccessKey != "" {
		return "the configured static keys"
	}
	if v, err := c.creds.GetWithContext(nil); err != nil ||
		v.SignerType == credentials.SignatureAnonymous {
		return "an anonymous request (no static keys, and the AWS credential chain found none)"
	}
	return "the credentials of the AWS chain"
}

// tlsMismatch explains an error that comes from TLS settings not fitting
// the server, or returns "".
func (c *conn) tlsMismatch(err error) string {
	if msg := tlsconf.Explain(err, tlsKeys, false); msg != "" {
		return msg
	}
	if c.cfg.Secure && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return "the server does not speak TLS on this port: point s3.endpoint at its TLS port, " +
			"or set s3.secure: false (and no s3.ca-file, no https://) if it really is plain HTTP"
	}
	// A plain-HTTP request to a TLS port: Go's TLS servers, MinIO among
	// them, answer it with an HTTP 400, which a HEAD shows without a body.
	// Whether the port speaks TLS is asked directly.
	if !c.cfg.Secure && minio.ToErrorResponse(err).StatusCode == http.StatusBadRequest &&
		tlsconf.SpeaksTLS(context.Background(), c.cfg.Endpoint) {
		return "the server speaks TLS and this client plain HTTP: " +
			"set s3.secure: true (or https:// in s3.endpoint), " +
			"and " + caHint + " if its certificate is from a private CA"
	}
	return ""
}

func (c *conn) unreachable(why string) error {
	return fmt.Errorf(
		"store: cannot reach the S3 endpoint %s (%s): "+
			"start the dev stack with `whestbake dev up`, or fix %s: %w",
		c.cfg.Endpoint,
		why,
		endpointHint,
		ErrUnreachable,
	)
}

func (c *conn) noBucket(bucket string) error {
	return fmt.Errorf(
		"store: bucket %q on %s: %w: "+
			"create it (`whestbake dev up` creates the dev buckets) "+
			"or fix the bucket name in the config",
		bucket,
		c.cfg.Endpoint,
		ErrNoBucket,
	)
}

// redact removes the secret key from text that came from the library, which
// we do not control.
func (c *conn) redact(s string) string {
	if c.cfg.SecretKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.SecretKey, "[redacted]")
}

// scrubbed carries a library error under a redacted message, keeping the
// original reachable for errors.As, as a minio.ErrorResponse.
type scrubbed struct {
	msg string
	err error
}

func (e scrubbed) Error() string { return e.msg }
func (e scrubbed) Unwrap() error { return e.err }
