package temporalconn

import (
	"crypto/tls"
	"time"

	"github.com/whestbake/whestbake/internal/tlsconf"
)

// Config is what a connection needs: the connection's own configuration,
// which internal/settings converts its temporal.* keys into with
// settings.Temporal.Conn, so that this package depends on nothing above it.
// Messages name the config keys, such as temporal.address and
// temporal.tls.ca-file, and, through EnvName, their environment variables.
type Config struct {
	Address   string
	Namespace string
	// APIKey is sent as "authorization: Bearer <key>" on every call, and
	// kept out of every message.
	APIKey string
	TLS    TLS
	// EnvName is the environment variable of a config key, for messages.
	EnvName func(key string) string
}

// TLS is the connection's TLS: key material in files, temporal.tls.*.
type TLS struct {
	Enabled    bool
	CAFile     string // PEM bundle of the server's CA; empty: the system roots
	ServerName string // name the server's certificate must carry; empty: the address's host
	CertFile   string // client certificate, for mutual TLS
	KeyFile    string // its private key
}

// TLSKeys name the Temporal TLS settings in messages.
var TLSKeys = tlsconf.Keys{
	Enable:     "temporal.tls.* and temporal.api-key",
	CA:         "temporal.tls.ca-file",
	Cert:       "temporal.tls.cert-file",
	Key:        "temporal.tls.key-file",
	ServerName: "temporal.tls.server-name",
}

// TLSOn reports whether the connection uses TLS: when enabled, when any TLS
// file or name is set, or with an API key. A key must never cross the
// network in plain text; the SDK turns TLS on for keys the same way.
func (c Config) TLSOn() bool {
	x := c.TLS
	return x.Enabled ||
		x.CAFile != "" ||
		x.ServerName != "" ||
		x.CertFile != "" ||
		x.KeyFile != "" ||
		c.APIKey != ""
}

// ClientTLS is the connection's TLS configuration, nil when it is plain
// text as TLSOn says. Its error names the keys at fault, TLSKeys.
func (c Config) ClientTLS() (*tls.Config, error) {
	if !c.TLSOn() {
		return nil, nil
	}
	return tlsconf.Client(
		tlsconf.Files{
			CA:         c.TLS.CAFile,
			Cert:       c.TLS.CertFile,
			Key:        c.TLS.KeyFile,
			ServerName: c.TLS.ServerName,
		},
		TLSKeys,
		time.Now(),
	)
}
