package store

import (
	"fmt"
	"log/slog"
	"strings"
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
}

// Config keys and environment variables named in error messages, so that a
// user who sees an error knows exactly what to change.
const (
	endpointHint = "s3.endpoint (env WHESTBAKE_S3_ENDPOINT)"
	credsHint    = "s3.access-key / s3.secret-key in the config file, or the env vars WHESTBAKE_S3_ACCESS_KEY / WHESTBAKE_S3_SECRET_KEY"
)

// String shows where the config points and never the credentials, so a Config
// can be printed or logged as a whole (%v and %+v use String, %#v GoString).
func (c Config) String() string {
	scheme := "http"
	if c.Secure {
		scheme = "https"
	}
	s := scheme + "://" + c.Endpoint
	if c.Region != "" {
		s += " region=" + c.Region
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
		slog.String("credentials", c.credentialsState()),
	)
}

func (c Config) credentialsState() string {
	if c.AccessKey == "" && c.SecretKey == "" {
		return "none"
	}
	return "set"
}

// normalized strips a URL scheme from the endpoint (setting Secure to match)
// and checks that what is left is a bare host:port.
func (c Config) normalized() (Config, error) {
	switch {
	case strings.HasPrefix(c.Endpoint, "https://"):
		c.Endpoint, c.Secure = strings.TrimPrefix(c.Endpoint, "https://"), true
	case strings.HasPrefix(c.Endpoint, "http://"):
		c.Endpoint, c.Secure = strings.TrimPrefix(c.Endpoint, "http://"), false
	}
	c.Endpoint = strings.TrimSuffix(c.Endpoint, "/")
	if c.Endpoint == "" {
		return c, fmt.Errorf("store: no S3 endpoint configured: set %s, e.g. 127.0.0.1:9000 for `whestbake dev up`", endpointHint)
	}
	if strings.Contains(c.Endpoint, "/") {
		return c, fmt.Errorf("store: S3 endpoint %q must be host:port without a path: fix %s", c.Endpoint, endpointHint)
	}
	return c, nil
}
