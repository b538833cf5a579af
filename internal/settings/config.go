// Package settings is the one configuration of the Temporal bake: the worker
// and the starter read the same YAML file, WHESTBAKE_* environment variables
// and flags into a Config, and validate it before anything starts. Keys are
// the mapstructure tags below, nested with "."; the environment variable of a
// key is WHESTBAKE_ + the key upper-cased with "." and "-" turned into "_".
//
// It is the schema, the defaults and the validation of the values, which
// reads no file but the config file itself: the files a config names, its
// scratch directory and the host's memory are the preflight step's, in
// internal/preflight, which the worker and the starter run.
package settings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/temporalconn"
)

// Config is everything a worker or a starter needs.
type Config struct {
	Temporal Temporal `mapstructure:"temporal"`
	S3       S3       `mapstructure:"s3"`
	Bake     Bake     `mapstructure:"bake"`
	Release  Release  `mapstructure:"release"`
	Policy   Policy   `mapstructure:"policy"`
	Worker   Worker   `mapstructure:"worker"`
}

// Temporal says where the Temporal frontend is and how to authenticate to
// it: TLS with a private CA, a server name, and a client certificate for
// mutual TLS; and Temporal Cloud's API keys.
type Temporal struct {
	Address   string `mapstructure:"address"`
	Namespace string `mapstructure:"namespace"`
	// UI is the Web UI base URL for the starter's links; empty: the dev
	// stack's, if Address is its frontend, else none.
	UI  string      `mapstructure:"ui"`
	TLS TemporalTLS `mapstructure:"tls"`
	// APIKey is sent as "authorization: Bearer <key>" on every call, as the
	// SDK's client.NewAPIKeyStaticCredentials sends it. It comes from the
	// config file or WHESTBAKE_TEMPORAL_API_KEY only, like the S3 secret.
	APIKey Secret `mapstructure:"api-key"`
}

// TemporalTLS is the TLS of the Temporal connection. Key material is read
// from files, never from the config itself, so the config can be shared
// and the files mounted from a secret store.
type TemporalTLS struct {
	Enabled bool `mapstructure:"enabled"`
	// CAFile is the PEM bundle of the server's CA; empty: the system roots.
	CAFile string `mapstructure:"ca-file"`
	// ServerName is the name the server's certificate must carry; empty:
	// the address's host.
	ServerName string `mapstructure:"server-name"`
	CertFile   string `mapstructure:"cert-file"` // client certificate, for mutual TLS
	KeyFile    string `mapstructure:"key-file"`  // its private key
}

// TLSOn reports whether the Temporal connection uses TLS, by temporalconn's rule.
func (t Temporal) TLSOn() bool { return t.Conn().TLSOn() }

// Conn is the connection's own config, a temporalconn.Config: the one
// conversion of the temporal.* keys, so temporalconn needs nothing of
// settings.
func (t Temporal) Conn() temporalconn.Config {
	x := t.TLS
	return temporalconn.Config{
		Address:   t.Address,
		Namespace: t.Namespace,
		APIKey:    t.APIKey.Reveal(),
		EnvName:   EnvName,
		TLS: temporalconn.TLS{
			Enabled:    x.Enabled,
			CAFile:     x.CAFile,
			ServerName: x.ServerName,
			CertFile:   x.CertFile,
			KeyFile:    x.KeyFile,
		},
	}
}

// S3 is the artifact store, MinIO in development. The credentials are
// Secrets: every way of printing them prints "[redacted]".
// With neither key set, the standard AWS credential chain is used: see
// store.Config.
type S3 struct {
	Endpoint   string `mapstructure:"endpoint"`
	AccessKey  Secret `mapstructure:"access-key"`
	SecretKey  Secret `mapstructure:"secret-key"`
	Secure     bool   `mapstructure:"secure"`
	CAFile     string `mapstructure:"ca-file"` // PEM bundle of a private CA; implies secure
	Region     string `mapstructure:"region"`
	Addressing string `mapstructure:"addressing"` // auto, path or virtual-host
	Bucket     string `mapstructure:"bucket"`
}

// Bake is what to bake: the shared MLP shape, the splits, and how the work is cut.
type Bake struct {
	ID           string  `mapstructure:"id"`
	Width        int     `mapstructure:"width"`
	Depth        int     `mapstructure:"depth"`
	NSamples     Count   `mapstructure:"n-samples"`
	Sampler      string  `mapstructure:"sampler"`
	DotProduct   string  `mapstructure:"dot-product"`
	ChunkSize    int     `mapstructure:"chunk-size"`
	SliceSize    int     `mapstructure:"slice-size"`
	MaxInFlight  string  `mapstructure:"max-in-flight"` // AutoInFlight or a number; see InFlight
	GPUQueue     string  `mapstructure:"gpu-queue"`
	DefaultSplit string  `mapstructure:"default-split"`
	Splits       []Split `mapstructure:"splits"`
	// Seed protocol 4.0 takes its salt from dataset.SaltEnv, in the
	// starter's and every GPU worker's environment: the salt is never a
	// config key, so it is in no config file and no workflow input.
	SeedProtocol bakeapi.SeedProtocol `mapstructure:"seed-protocol"`
	WithholdSalt bool                 `mapstructure:"withhold-salt"`
	SaltID       string               `mapstructure:"salt-id"`
	// KeepIntermediates keeps identity blocks, per-MLP results, checkpoints,
	// slice partials and merged splits after the steps that consume them.
	KeepIntermediates bool `mapstructure:"keep-intermediates"`
}

// Split is one split of the bake. Seeds come from SeedsFile, a JSON array as
// `whestbake dataset generate-seeds` writes it; from Seed, reproducibly; or,
// with neither, from OS entropy once, and the bake stores them.
type Split struct {
	Name      string  `mapstructure:"name"`
	Config    string  `mapstructure:"config"`
	NMLPs     Count   `mapstructure:"n-mlps"`
	Seed      *uint64 `mapstructure:"seed"`
	SeedsFile string  `mapstructure:"seeds-file"` // relative paths are relative to the config file
}

// Release is where the finished dataset is published; an empty Bucket skips
// the S3 release, an empty Hub.Repo the Hugging Face Hub. Either, both or
// neither may be set.
type Release struct {
	Bucket string `mapstructure:"bucket"`
	Prefix string `mapstructure:"prefix"`
	Name   string `mapstructure:"name"`
	Tag    string `mapstructure:"tag"`
	Hub    Hub    `mapstructure:"hub"`
}

// Hub is the Hugging Face Hub dataset repository a bake publishes to. The
// token is the control worker's: HF_TOKEN in its environment, or the file
// TokenFile names; it is never a config value, flag or workflow input.
type Hub struct {
	Repo      string `mapstructure:"repo"`
	Revision  string `mapstructure:"revision"`
	Tag       string `mapstructure:"tag"`
	Message   string `mapstructure:"message"`
	Private   bool   `mapstructure:"private"`
	Replace   bool   `mapstructure:"replace"`
	Endpoint  string `mapstructure:"endpoint"`
	TokenFile string `mapstructure:"token-file"`
}

// Spec is the workflow input's Hub, nil when no repository is configured.
func (h Hub) Spec() *bakeapi.HubSpec {
	if h.Repo == "" {
		return nil
	}
	return &bakeapi.HubSpec{
		Repo:     h.Repo,
		Revision: h.Revision,
		Tag:      h.Tag,
		Message:  h.Message,
		Endpoint: h.Endpoint,
		Private:  h.Private,
		Replace:  h.Replace,
	}
}

// Policy is bakeapi.Policy with config keys: every timeout and retry bound
// of a bake. The fields match one for one, so the two convert into each
// other, and a change to one that forgets the other does not compile. The
// durations are bakeapi.Duration, which the workflow input shows as text.
type Policy struct {
	SeedsTimeout        bakeapi.Duration `mapstructure:"seeds-timeout"`
	SliceTimeout        bakeapi.Duration `mapstructure:"slice-timeout"`
	SliceHeartbeat      bakeapi.Duration `mapstructure:"slice-heartbeat"`
	SliceMaxAttempts    int32            `mapstructure:"slice-max-attempts"`
	MergeTimeout        bakeapi.Duration `mapstructure:"merge-timeout"`
	PushTimeout         bakeapi.Duration `mapstructure:"push-timeout"`
	RetryInitial        bakeapi.Duration `mapstructure:"retry-initial"`
	RetryMax            bakeapi.Duration `mapstructure:"retry-max"`
	OtherMaxAttempts    int32            `mapstructure:"other-max-attempts"`
	FilesystemHeartbeat bakeapi.Duration `mapstructure:"filesystem-heartbeat"`
}

// Worker is how a whestbake-worker process runs.
type Worker struct {
	// Role is control, gpu or all; no default, so that a GPU host does not
	// run workflows by accident.
	Role            string        `mapstructure:"role"`
	Device          string        `mapstructure:"device"` // auto, cpu or cuda
	Threads         int           `mapstructure:"threads"`
	CheckpointEvery time.Duration `mapstructure:"checkpoint-every"`
	StallTimeout    time.Duration `mapstructure:"stall-timeout"`
	// MaxMemory is what one worker may use; a slice whose shape needs more
	// is refused by the starter, and by the worker without running it.
	// Unset, 0, is the host's: its cgroup's limit, else the machine's
	// memory, which the preflight step reads before validating.
	MaxMemory ByteSize `mapstructure:"max-memory"`
	// MetricsListen is where /metrics, /healthz and /readyz are served, a
	// host:port, ":9464" for every interface; empty serves nothing.
	MetricsListen string `mapstructure:"metrics-listen"`
	// ScratchDir holds every temporary file the worker writes: the local
	// copies of datasets that slices, merges and combines go through. A
	// merge needs room for twice the largest split. Empty is the system's
	// temporary directory: TMPDIR, else /tmp. See Scratch.
	ScratchDir string `mapstructure:"scratch-dir"`
}

// Worker roles.
const (
	RoleControl = "control"
	RoleGPU     = "gpu"
	RoleAll     = "all"
)

// Dev-stack endpoints, the defaults, so that a worker and a starter on one
// machine need nothing but credentials after `whestbake dev up`, whose
// record of the ports it chose comes before them: see LoadUnder.
const (
	DefaultTemporalAddress = "127.0.0.1:7233"
	DefaultS3Endpoint      = "127.0.0.1:9000"
	DefaultBucket          = "whestbake"
)

// Default returns the configuration before any file, environment or flag.
// Credentials have no default: they come from the environment or the file.
func Default() Config {
	return Config{
		Temporal: Temporal{Address: DefaultTemporalAddress, Namespace: "default"},
		S3: S3{
			Endpoint:   DefaultS3Endpoint,
			Bucket:     DefaultBucket,
			Addressing: store.AddressingAuto,
		},
		Bake: Bake{
			Sampler:      string(bakeapi.SamplerPhilox),
			DotProduct:   string(bakeapi.DotFMA),
			SliceSize:    1,
			MaxInFlight:  AutoInFlight,
			GPUQueue:     bakeapi.GPUQueue,
			SeedProtocol: bakeapi.SeedProtocolV3,
		},
		Release: Release{
			Hub: Hub{Revision: "main", Message: hub.DefaultMessage, Endpoint: hub.DefaultEndpoint},
		},
		Policy: Policy(bakeapi.DefaultPolicy),
		Worker: Worker{
			Device:          gpuengine.DeviceAuto,
			Threads:         gpuengine.DefaultThreads(),
			CheckpointEvery: rows.DefaultCheckpointEvery,
			StallTimeout:    rows.DefaultStallTimeout,
		},
	}
}

// AutoInFlight is bake.max-in-flight's default: each split keeps as many
// slices in flight as workers poll the GPU queue, counted when each run of
// its workflow starts and re-counted every minute while it runs, so workers
// that join are put to work at once.
const AutoInFlight = "auto"

// InFlight is bake.max-in-flight as the workflow input has it: 0 for auto,
// else the number of slices of one split running at once.
func (b Bake) InFlight() (int, error) {
	v := strings.TrimSpace(b.MaxInFlight)
	if strings.EqualFold(v, AutoInFlight) {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxInFlight {
		return 0, fmt.Errorf(
			"= %s: must be auto (one slice per worker polling bake.gpu-queue, "+
				"re-counted as workers come and go) "+
				"or a number of slices of one split running at once, in [1, %d]",
			v,
			maxInFlight,
		)
	}
	return n, nil
}

// Spec is the bake's bakeapi.Spec, whose salt declaration records the
// SHA-256 of salt, Salt's result.
func (b Bake) Spec(salt seeds.Salt) bakeapi.Spec {
	s := rows.NormalizeSpec(bakeapi.Spec{
		Width:     b.Width,
		Depth:     b.Depth,
		NSamples:  int64(b.NSamples),
		Sampler:   bakeapi.Sampler(b.Sampler),
		ChunkSize: b.ChunkSize,
		Dot:       bakeapi.DotProduct(b.DotProduct),
	})
	s.SeedProtocol = b.SeedProtocol
	s.Salt = bakeapi.Salt{Withhold: b.WithholdSalt, ID: b.SaltID}
	if !salt.IsZero() {
		s.Salt.SHA256 = salt.Digest()
	}
	return s
}

// Salt is a protocol-4.0 bake's salt from dataset.SaltEnv, read with
// getenv, zero under any other protocol. A Temporal bake is always sliced,
// so, as in whestbench, the salt is never generated; published or withheld,
// the GPU workers bring the same one. Its errors name the variable.
func (b Bake) Salt(getenv func(string) string) (seeds.Salt, error) {
	if b.SeedProtocol != bakeapi.SeedProtocolV4 {
		return seeds.Salt{}, nil
	}
	salt, err := mlps.EnvSalt(getenv)
	if errors.Is(err, mlps.ErrSaltUnset) {
		return salt, fmt.Errorf(
			"%w: bake.seed-protocol 4.0 takes the salt "+
				"(%d bytes as hex; `openssl rand -hex %[2]d` makes one) from it, "+
				"in the starter's environment and in every GPU worker's, "+
				"never from the config file",
			err,
			seeds.SaltBytes,
		)
	}
	return salt, err
}
