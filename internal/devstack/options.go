// Package devstack runs the local development servers — the Temporal dev
// server with its Web UI, and MinIO — as detached processes on 127.0.0.1,
// with their state, logs and pid files under one directory.
package devstack

import (
	"cmp"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/internal/store"
)

// Development credentials for the local MinIO. They are public and only
// fit a server that listens on loopback; never use them for a shared server.
const (
	DevAccessKey = "whestbake"
	DevSecretKey = "whestbake-dev-secret"
)

// The buckets `whestbake dev up` creates: bake artifacts, and the default
// destination of pushed releases.
const (
	ArtifactsBucket = "whestbake"
	ReleasesBucket  = "releases"
)

// Namespace is the Temporal namespace the dev server creates.
const Namespace = "default"

// SearchAttribute is a custom search attribute registered on the dev server.
type SearchAttribute struct{ Name, Type string }

// SearchAttributes are the attributes bakes upsert, so the Web UI can filter
// runs by bake and stage.
var SearchAttributes = []SearchAttribute{{"BakeID", "Keyword"}, {"BakeStage", "Keyword"}}

// Options place the dev stack. Zero fields take the defaults of
// DefaultOptions, so tests set only what they change; a zero port takes
// the one recorded in Dir by Record before the default.
type Options struct {
	Dir              string        // state, logs and pid files
	BinDir           string        // holds the temporal and minio binaries that `make tools` builds
	TemporalPort     int           // Temporal frontend, gRPC
	UIPort           int           // Temporal Web UI
	MinIOPort        int           // S3 API
	MinIOConsolePort int           // MinIO web console
	AccessKey        string        // MinIO root user
	SecretKey        string        // MinIO root password
	Buckets          []string      // created once MinIO is healthy
	StartTimeout     time.Duration // how long a server may take to become healthy
	StopTimeout      time.Duration // how long SIGTERM is given before SIGKILL
	// MoveIfTaken makes Up start a server whose port another program
	// holds on a free port instead, which the record names, rather than
	// fail: `dev up --move-if-taken`, what `make demo` runs.
	MoveIfTaken bool
	// MinIOCertsDir, when set, serves MinIO over TLS: it holds public.crt
	// and private.key in MinIO's --certs-dir layout, and MinIOCAFile the CA
	// that signed them, which S3Config's clients trust.
	MinIOCertsDir string
	MinIOCAFile   string
}

// DefaultOptions are the ports and paths of `whestbake dev up`.
func DefaultOptions() Options {
	return Options{
		Dir:              ".whestbake",
		BinDir:           "bin",
		TemporalPort:     7233,
		UIPort:           8233,
		MinIOPort:        9000,
		MinIOConsolePort: 9001,
		AccessKey:        DevAccessKey,
		SecretKey:        DevSecretKey,
		StartTimeout:     60 * time.Second,
		StopTimeout:      15 * time.Second,
	}
}

// host is the only interface the stack listens on.
const host = "127.0.0.1"

// TemporalAddr is the host:port Temporal clients dial.
func (o Options) TemporalAddr() string { return addr(o.TemporalPort) }

// UIURL is the Temporal Web UI.
func (o Options) UIURL() string { return "http://" + addr(o.UIPort) }

// ConsoleURL is the MinIO web console.
func (o Options) ConsoleURL() string { return "http://" + addr(o.MinIOConsolePort) }

// S3Config is how store clients reach this stack's MinIO.
func (o Options) S3Config() store.Config {
	return store.Config{
		Endpoint:  addr(o.MinIOPort),
		AccessKey: o.AccessKey,
		SecretKey: o.SecretKey,
		Region:    "us-east-1",
		Secure:    o.MinIOCertsDir != "",
		CAFile:    o.MinIOCAFile,
	}
}

func addr(port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// Resolved is o as the stack runs with it: zero fields filled, ports from
// Dir's record first, paths absolute.
func (o Options) Resolved() (Options, error) { return o.withDefaults() }

// withDefaults fills zero fields, ports from Dir's record first, and makes
// paths absolute, since the servers outlive the working directory of the
// command that started them.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions()
	if o.Dir == "" {
		o.Dir = d.Dir
	}
	if o.BinDir == "" {
		o.BinDir = d.BinDir
	}
	if o.AccessKey == "" {
		o.AccessKey = d.AccessKey
	}
	if o.SecretKey == "" {
		o.SecretKey = d.SecretKey
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = d.StartTimeout
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = d.StopTimeout
	}
	var err error
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return o, fmt.Errorf("devstack: dir %q: %w", o.Dir, err)
	}
	if o.BinDir, err = filepath.Abs(o.BinDir); err != nil {
		return o, fmt.Errorf("devstack: bin dir %q: %w", o.BinDir, err)
	}
	rec, _, err := ReadRecord(o.Dir)
	if err != nil {
		return o, err
	}
	o.TemporalPort = cmp.Or(o.TemporalPort, rec.TemporalPort, d.TemporalPort)
	o.UIPort = cmp.Or(o.UIPort, rec.UIPort, d.UIPort)
	o.MinIOPort = cmp.Or(o.MinIOPort, rec.MinIOPort, d.MinIOPort)
	o.MinIOConsolePort = cmp.Or(o.MinIOConsolePort, rec.MinIOConsolePort, d.MinIOConsolePort)
	return o, o.validate()
}

func (o Options) validate() error {
	seen := map[int]string{}
	for _, p := range o.ports() {
		if p.port < 1 || p.port > 65535 {
			return fmt.Errorf("devstack: %s %d is not a port (1-65535): fix %s",
				p.key, p.port, p.hint())
		}
		if other, ok := seen[p.port]; ok {
			return fmt.Errorf("devstack: %s and %s are both %d: give each its own port (%s)",
				other, p.key, p.port, p.hint())
		}
		seen[p.port] = p.key
	}
	// The dev server passes --db-filename into an SQLite URI, where these
	// characters would silently cut the path and share one database file.
	if strings.ContainsAny(o.Dir, "#?") {
		return fmt.Errorf("devstack: state directory %q contains '#' or '?', "+
			"which Temporal's --db-filename cannot take: choose another --dir", o.Dir)
	}
	// MinIO refuses to start with shorter root credentials; say so up front
	// instead of leaving the reason in its log.
	if len(o.AccessKey) < 3 {
		return fmt.Errorf("devstack: the MinIO access key must be at least 3 characters: " +
			"fix WHESTBAKE_S3_ACCESS_KEY")
	}
	if len(o.SecretKey) < 8 {
		return fmt.Errorf("devstack: the MinIO secret key must be at least 8 characters: " +
			"fix WHESTBAKE_S3_SECRET_KEY")
	}
	return nil
}

// portKey ties a port to the option a user changes when it is taken.
type portKey struct {
	port int
	key  string // flag name, also the config key
}

func (p portKey) hint() string { return "--" + p.key }

func (o Options) temporalPorts() []portKey {
	return []portKey{{o.TemporalPort, "temporal-port"}, {o.UIPort, "ui-port"}}
}

func (o Options) minioPorts() []portKey {
	return []portKey{{o.MinIOPort, "minio-port"}, {o.MinIOConsolePort, "minio-console-port"}}
}

func (o Options) ports() []portKey { return append(o.temporalPorts(), o.minioPorts()...) }

// String leaves out the secret key, so Options can be printed or logged
// whole: %v and %+v use String, %#v GoString.
func (o Options) String() string {
	return fmt.Sprintf("{Dir:%s BinDir:%s "+
		"TemporalPort:%d UIPort:%d MinIOPort:%d MinIOConsolePort:%d "+
		"AccessKey:%s SecretKey:[redacted] Buckets:%v}",
		o.Dir, o.BinDir,
		o.TemporalPort, o.UIPort, o.MinIOPort, o.MinIOConsolePort,
		o.AccessKey, o.Buckets)
}

// GoString keeps %#v from printing the secret.
func (o Options) GoString() string { return "devstack.Options" + o.String() }
