package store

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/whestbake/whestbake/internal/tlsconf"
)

// Config says how to reach an S3-compatible server. The endpoint is
// "host:port"; an "http://" or "https://" prefix is accepted and sets Secure.
// Empty Region lets the client ask the server for each bucket's region.
type Config struct {
	Endpoint  string
	AccessKey string
	SecretKey string
	Secure    bool
	Region    string
	// CAFile is a PEM bundle trusted for the server's certificate in place
	// of the system roots, such as a private CA. It implies Secure.
	CAFile string
	// Addressing is how a bucket is put in a request. AddressingPath puts it
	// in the path, http://host/bucket/key, as MinIO and most on-premise
	// servers do. AddressingVirtualHost puts it in the host,
	// http://bucket.host/key, which AWS prefers. AddressingAuto, the default,
	// lets minio-go decide from the endpoint.
	Addressing string
}

// Addressing styles, the values of Config.Addressing.
const (
	AddressingAuto        = "auto"
	AddressingPath        = "path"
	AddressingVirtualHost = "virtual-host"
)

// ClientTLS is the TLS configuration that trusts CAFile, nil when none is
// set and the system roots apply. Its error, a tlsconf.Error, names
// s3.ca-file: the preflight step calls it to check the file before
// anything connects.
func (c Config) ClientTLS() (*tls.Config, error) {
	if c.CAFile == "" {
		return nil, nil
	}
	return tlsconf.Client(tlsconf.Files{CA: c.CAFile}, tlsconf.Keys{CA: "s3.ca-file"}, time.Now())
}

// Config keys and environment variables named in error messages, so that a
// user who sees an error knows exactly what to change.
const (
	endpointHint = "s3.endpoint (env WHESTBAKE_S3_ENDPOINT)"
	credsHint    = "s3.access-key / s3.secret-key in the config file, " +
		"or the env vars WHESTBAKE_S3_ACCESS_KEY / WHESTBAKE_S3_SECRET_KEY " +
		"(with neither, the standard AWS chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, " +
		"the shared credentials file with AWS_PROFILE, or the host's IAM role / web identity)"
	caHint = "s3.ca-file (env WHESTBAKE_S3_CA_FILE)"
)

// String shows where the config points and never the credentials, so a Config
// can be printed or logged as a whole: %v and %+v use String, %#v GoString.
func (c Config) String() string {
	scheme := "http"
	if c.Secure {
		scheme = "https"
	}
	s := scheme + "://" + c.Endpoint
	if c.Region != "" {
		s += " region=" + c.Region
	}
	if c.CAFile != "" {
		s += " ca-file=" + c.CAFile
	}
	if c.Addressing != "" && c.Addressing != AddressingAuto {
		s += " addressing=" + c.Addressing
	}
	return s + " credentials=" + c.credentialsState()
}

// GoString keeps %#v from printing the struct fields, the secret among them.
func (c Config) GoString() string { return "store.Config{" + c.String() + "}" }

// LogValue keeps slog from printing the secret when a Config is logged.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("endpoint", c.Endpoint),
		slog.Bool("secure", c.Secure),
		slog.String("region", c.Region),
		slog.String("ca_file", c.CAFile),
		slog.String("addressing", c.Addressing),
		slog.String("credentials", c.credentialsState()),
	)
}

// credentialsState says where the credentials come from, never what they are.
func (c Config) credentialsState() string {
	if c.AccessKey == "" && c.SecretKey == "" {
		return "aws-chain"
	}
	return "set"
}

// normalized strips a URL scheme from the endpoint, setting Secure to match,
// and checks that what is left is a bare host:port.
func (c Config) normalized() (Config, error) {
	switch {
	case strings.HasPrefix(c.Endpoint, "https://"):
		c.Endpoint = strings.TrimPrefix(c.Endpoint, "https://")
		c.Secure = true
	case strings.HasPrefix(c.Endpoint, "http://"):
		c.Endpoint = strings.TrimPrefix(c.Endpoint, "http://")
		c.Secure = false
	}
	c.Endpoint = strings.TrimSuffix(c.Endpoint, "/")
	if c.Endpoint == "" {
		return c, fmt.Errorf(
			"store: no S3 endpoint configured: set %s, e.g. 127.0.0.1:9000 for `whestbake dev up`",
			endpointHint,
		)
	}
	if strings.Contains(c.Endpoint, "/") {
		return c, fmt.Errorf(
			"store: S3 endpoint %q must be host:port without a path: fix %s",
			c.Endpoint,
			endpointHint,
		)
	}
	if c.CAFile != "" {
		c.Secure = true
	}
	switch c.Addressing {
	case "", AddressingAuto, AddressingPath, AddressingVirtualHost:
	default:
		return c, fmt.Errorf(
			"store: S3 addressing %q is unknown: set s3.addressing to auto, path or virtual-host",
			c.Addressing,
		)
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		return c, fmt.Errorf(
			"store: only one of the S3 access key and secret key is set: "+
				"set both (%s), or neither to use the standard AWS credential chain",
			"s3.access-key / s3.secret-key",
		)
	}
	return c, nil
}

// bucketLookup is minio-go's name for the addressing style.
func (c Config) bucketLookup() minio.BucketLookupType {
	switch c.Addressing {
	case AddressingPath:
		return minio.BucketLookupPath
	case AddressingVirtualHost:
		return minio.BucketLookupDNS
	}
	return minio.BucketLookupAuto
}

// credentials are the static keys when set, else the standard AWS chain,
// in the order the AWS SDKs use: the environment, with AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; the shared credentials file,
// AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE;
// then the host's role: web identity from AWS_WEB_IDENTITY_TOKEN_FILE, as
// on EKS, the ECS container endpoint or the EC2 instance metadata service.
// Each provider refreshes its credentials before they expire.
func (c Config) credentials() *credentials.Credentials {
	if c.AccessKey != "" || c.SecretKey != "" {
		return credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
}
