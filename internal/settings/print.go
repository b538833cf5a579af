package settings

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/keys"
)

// String summarizes the configuration without credentials; fmt's %v and %+v use it.
func (c Config) String() string {
	return fmt.Sprintf(
		"temporal=%s/%s temporal-auth=%s s3=%s bucket=%s credentials=%s bake=%q splits=%d "+
			"release=%s worker=%s/%s",
		c.Temporal.Address,
		c.Temporal.Namespace,
		c.Temporal.auth(),
		c.S3.Endpoint,
		c.S3.Bucket,
		c.S3.credentials(),
		c.Bake.ID,
		len(c.Bake.Splits),
		c.releaseURI(),
		c.Worker.Role,
		c.Worker.Device,
	)
}

// GoString keeps %#v from printing the struct, credentials included.
func (c Config) GoString() string { return "config.Config{" + c.String() + "}" }

// LogValue logs the configuration without credentials.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("temporal", c.Temporal.Address),
		slog.String("namespace", c.Temporal.Namespace),
		slog.String("temporal_auth", c.Temporal.auth()),
		slog.String("s3", c.S3.Endpoint),
		slog.String("bucket", c.S3.Bucket),
		slog.String("credentials", c.S3.credentials()),
		slog.String("gpu_queue", c.Bake.GPUQueue),
		slog.String("role", c.Worker.Role),
		slog.String("device", c.Worker.Device),
		slog.Int("threads", c.Worker.Threads),
		slog.String("max_memory", bytesize.Format(int64(c.Worker.MaxMemory))),
	)
}

func (s S3) credentials() string {
	switch {
	case s.AccessKey != "" && s.SecretKey != "":
		return "set"
	case s.AccessKey == "" && s.SecretKey == "":
		return "aws-chain"
	}
	return "incomplete"
}

// auth says how the Temporal connection is secured, never with what.
func (t Temporal) auth() string {
	var parts []string
	switch {
	case t.TLS.CertFile != "":
		parts = append(parts, "mtls")
	case t.TLSOn():
		parts = append(parts, "tls")
	default:
		parts = append(parts, "plaintext")
	}
	if t.APIKey != "" {
		parts = append(parts, "api-key")
	}
	return strings.Join(parts, "+")
}

func (c Config) releaseURI() string {
	if c.Release.Bucket == "" {
		return "none"
	}
	return keys.ReleaseURI(c.Release.Bucket, c.Release.Prefix, c.Release.Name, c.Release.Tag)
}
