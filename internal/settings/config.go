// Package config is the one configuration of the Temporal bake: the worker and
// the starter read the same YAML file, WHESTBAKE_* environment variables and
// flags into a Config, and validate it before anything starts. Keys are the
// mapstructure tags below, nested with "."; the environment variable of a key
// is WHESTBAKE_ + the key upper-cased with "." and "-" turned into "_".
package settings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
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

// Temporal says where the Temporal frontend is.
type Temporal struct {
	Address   string `mapstructure:"address"`
	Namespace string `mapstructure:"namespace"`
	UI        string `mapstructure:"ui"` // Web UI base URL, for the links the starter prints
}

// S3 is the artifact store (MinIO in development). The credentials are
// Secrets: every way of printing them prints "[redacted]".
type S3 struct {
	Endpoint  string `mapstructure:"endpoint"`
	AccessKey Secret `mapstructure:"access-key"`
	SecretKey Secret `mapstructure:"secret-key"`
	Secure    bool   `mapstructure:"secure"`
	Region    string `mapstructure:"region"`
	Bucket    string `mapstructure:"bucket"`
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
	// KeepIntermediates keeps identity blocks, per-MLP results, checkpoints,
	// slice partials and merged splits after the steps that consume them.
	KeepIntermediates bool `mapstructure:"keep-intermediates"`
}

// Split is one split of the bake. Seeds come from SeedsFile (a JSON array, as
// `whestbake dataset generate-seeds` writes), from Seed (reproducible), or,
// with neither, from OS entropy once (the bake stores them).
type Split struct {
	Name      string  `mapstructure:"name"`
	Config    string  `mapstructure:"config"`
	NMLPs     Count   `mapstructure:"n-mlps"`
	Seed      *uint64 `mapstructure:"seed"`
	SeedsFile string  `mapstructure:"seeds-file"` // relative paths are relative to the config file
}

// Release is where the finished dataset is published; an empty Bucket skips the push.
type Release struct {
	Bucket string `mapstructure:"bucket"`
	Prefix string `mapstructure:"prefix"`
	Name   string `mapstructure:"name"`
	Tag    string `mapstructure:"tag"`
}

// Policy is bakeapi.Policy with config keys: every timeout and retry bound
// of a bake. The fields match one for one, so the two convert into each other
// (and a change to one that forgets the other does not compile).
type Policy struct {
	SeedsTimeout        time.Duration `mapstructure:"seeds-timeout"`
	SliceTimeout        time.Duration `mapstructure:"slice-timeout"`
	SliceHeartbeat      time.Duration `mapstructure:"slice-heartbeat"`
	SliceMaxAttempts    int32         `mapstructure:"slice-max-attempts"`
	MergeTimeout        time.Duration `mapstructure:"merge-timeout"`
	PushTimeout         time.Duration `mapstructure:"push-timeout"`
	RetryInitial        time.Duration `mapstructure:"retry-initial"`
	RetryMax            time.Duration `mapstructure:"retry-max"`
	OtherMaxAttempts    int32         `mapstructure:"other-max-attempts"`
	FilesystemHeartbeat time.Duration `mapstructure:"filesystem-heartbeat"`
}

// Worker is how a whestbake-worker process runs.
type Worker struct {
	Role            string        `mapstructure:"role"`   // control, gpu or all; no default, a GPU host must not run workflows by accident
	Device          string        `mapstructure:"device"` // auto, cpu or cuda
	Threads         int           `mapstructure:"threads"`
	CheckpointEvery time.Duration `mapstructure:"checkpoint-every"`
	StallTimeout    time.Duration `mapstructure:"stall-timeout"`
	// MaxMemory is what one worker may use; a slice whose shape needs more
	// is refused (by the starter, and by the worker without running it).
	// Default: the cgroup's limit, else the machine's memory.
	MaxMemory ByteSize `mapstructure:"max-memory"`
}

// Worker roles.
const (
	RoleControl = "control"
	RoleGPU     = "gpu"
	RoleAll     = "all"
)

// Dev-stack endpoints, the defaults, so that a worker and a starter on one
// machine need nothing but credentials after `whestbake dev up`.
const (
	DefaultTemporalAddress = "127.0.0.1:7233"
	DefaultUI              = "http://127.0.0.1:8233"
	DefaultS3Endpoint      = "127.0.0.1:9000"
	DefaultBucket          = "whestbake"
)

// Default returns the configuration before any file, environment or flag.
// Credentials have no default: they come from the environment or the file.
func Default() Config {
	return Config{
		Temporal: Temporal{Address: DefaultTemporalAddress, Namespace: "default", UI: DefaultUI},
		S3:       S3{Endpoint: DefaultS3Endpoint, Bucket: DefaultBucket},
		Bake: Bake{
			Sampler: string(bakeapi.SamplerPhilox), DotProduct: string(bakeapi.DotFMA),
			SliceSize: 1, MaxInFlight: AutoInFlight, GPUQueue: bakeapi.GPUQueue,
		},
		Policy: Policy(bakeapi.DefaultPolicy),
		Worker: Worker{
			Device: gpuengine.DeviceAuto, Threads: gpuengine.DefaultThreads(),
			CheckpointEvery: activities.DefaultCheckpointEvery, StallTimeout: activities.DefaultStallTimeout,
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
		return 0, fmt.Errorf("= %s: must be auto (one slice per worker polling bake.gpu-queue, re-counted as workers come and go) "+
			"or a number of slices of one split running at once, in [1, %d]", v, maxInFlight)
	}
	return n, nil
}

// Spec is the bake's bakeapi.Spec. The dot product belongs to the numpy
// sampler only, so a philox bake leaves it out (its default is for numpy).
func (b Bake) Spec() bakeapi.Spec {
	s := bakeapi.Spec{Width: b.Width, Depth: b.Depth, NSamples: int64(b.NSamples), Sampler: bakeapi.Sampler(b.Sampler), ChunkSize: b.ChunkSize}
	if s.Sampler == bakeapi.SamplerNumpy {
		s.Dot = bakeapi.DotProduct(b.DotProduct)
	}
	return s
}
