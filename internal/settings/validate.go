package settings

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/store"
)

// Error lists every problem found, one per line, each naming the key and the fix.
type Error struct{ Problems []string }

func (e *Error) Error() string { return strings.Join(e.Lines(), "\n") }

// Lines are the error's lines: a heading and a problem each, as
// safetext.Multiline, which a printer escapes line by line, since a
// problem quotes the config's values.
func (e *Error) Lines() []string {
	if len(e.Problems) == 1 {
		return []string{"invalid configuration: " + e.Problems[0]}
	}
	lines := []string{fmt.Sprintf("invalid configuration (%d problems):", len(e.Problems))}
	for _, p := range e.Problems {
		lines = append(lines, "  - "+p)
	}
	return lines
}

// Problems collects what is wrong with a config, one line per problem,
// each naming its key and the fix. The validators below fill one; the
// preflight step of internal/preflight adds what it finds in the files and
// on the host to theirs, so that one Error lists everything at once.
type Problems []string

// Addf adds the problem of key.
func (p *Problems) Addf(key, format string, a ...any) {
	*p = append(*p, key+" "+fmt.Sprintf(format, a...))
}

// Err is the Error of p, nil when p is empty.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Problems: p}
}

// ProblemsOf is the Problems of a validator's error, nil for nil, to add
// more to.
func ProblemsOf(err error) Problems {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return Problems(slices.Clone(e.Problems))
	}
	return Problems{err.Error()}
}

// fields adds the field errors of a bakeapi validation under their config
// keys, key mapping a field to its key; any other error is added as it is.
func (p *Problems) fields(err error, key func(field string) string) {
	if err == nil {
		return
	}
	fe := bakeapi.AsFieldErrors(err)
	if fe == nil {
		*p = append(*p, err.Error())
		return
	}
	for _, f := range fe {
		p.Addf(key(f.Field), "%s", f.Problem)
	}
}

// specKeys and splitKeys name bakeapi's fields as config keys.
var (
	specKeys = map[string]string{
		bakeapi.FieldWidth:        "bake.width",
		bakeapi.FieldDepth:        "bake.depth",
		bakeapi.FieldNSamples:     "bake.n-samples",
		bakeapi.FieldSampler:      "bake.sampler",
		bakeapi.FieldDotProduct:   "bake.dot-product",
		bakeapi.FieldChunkSize:    "bake.chunk-size",
		bakeapi.FieldSeedProtocol: "bake.seed-protocol",
		bakeapi.FieldWithholdSalt: "bake.withhold-salt",
		bakeapi.FieldSaltID:       "bake.salt-id",
		bakeapi.FieldSeedSalt:     dataset.SaltEnv,
	}
	splitKeys = map[string]string{
		bakeapi.FieldSplit:  "name",
		bakeapi.FieldConfig: "config",
		bakeapi.FieldNMLPs:  "n-mlps",
	}
)

// where tells the user how to set a key.
func where(key string) string {
	return fmt.Sprintf("set %s in the config file or %s", key, EnvName(key))
}

// Limits that catch typos before they cost anything.
const (
	maxInFlight = 1024
	maxThreads  = 4096
)

var (
	bakeIDRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	nameRE      = bakeIDRE // release names, tags and prefix segments, queue names
	bucketRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	maxBakeIDLn = 128
)

// Validate checks the values a starter needs, temporal, s3, bake, release
// and policy, and reports all problems at once. It reads no file: the files
// the config names, TLS PEM files and seeds files, are the preflight step's,
// which adds their problems to these.
func (c Config) Validate() error {
	var p Problems
	c.checkTemporal(&p)
	c.checkStore(&p)
	c.checkBake(&p)
	c.checkRelease(&p)
	c.checkPolicy(&p)
	return p.Err()
}

// ValidateWorker checks the values a whestbake-worker needs. Like Validate,
// it leaves the files and the scratch directory to the preflight step.
func (c Config) ValidateWorker() error {
	var p Problems
	c.checkTemporal(&p)
	c.checkStore(&p)
	w := c.Worker
	switch w.Role {
	case RoleControl, RoleGPU, RoleAll:
	case "":
		p.Addf(
			"worker.role",
			"is not set: pass --role control (workflows and CPU activities), "+
				"gpu (BakeSlice, one process per GPU) or all (both, for development)",
		)
	default:
		p.Addf("worker.role", "%q is unknown: use control, gpu or all", w.Role)
	}
	switch w.Device {
	case gpuengine.DeviceAuto, gpuengine.DeviceCPU, gpuengine.DeviceCUDA:
	default:
		p.Addf("worker.device", "%q is unknown: use auto, cpu or cuda (--device)", w.Device)
	}
	if w.Threads < 1 || w.Threads > maxThreads {
		p.Addf(
			"worker.threads",
			"= %d: must be in [1, %d] (CPU threads per MLP); %s or pass --threads",
			w.Threads,
			maxThreads,
			where("worker.threads"),
		)
	}
	if w.MetricsListen != "" {
		if _, port, err := net.SplitHostPort(w.MetricsListen); err != nil || port == "" {
			p.Addf(
				"worker.metrics-listen",
				"%q is not host:port: write it like :9464 (every interface) or 127.0.0.1:9464, "+
					"or leave it empty to serve no metrics",
				w.MetricsListen,
			)
		}
	}
	positive(&p, "worker.checkpoint-every", w.CheckpointEvery)
	positive(&p, "worker.stall-timeout", w.StallTimeout)
	if w.Role == RoleGPU || w.Role == RoleAll {
		c.checkQueue(&p)
	}
	return p.Err()
}

// ValidateTemporal checks the Temporal connection settings alone, for status, list and cancel.
func (c Config) ValidateTemporal() error {
	var p Problems
	c.checkTemporal(&p)
	return p.Err()
}

// ValidateStore checks the S3 settings alone, for dataset download.
func (c Config) ValidateStore() error {
	var p Problems
	c.checkStore(&p)
	return p.Err()
}

func (c Config) checkTemporal(p *Problems) {
	t := c.Temporal
	if t.Address == "" {
		p.Addf(
			"temporal.address",
			"is empty: %s to the Temporal frontend's host:port "+
				"(127.0.0.1:7233 for `whestbake dev up`)",
			where("temporal.address"),
		)
	} else if _, port, err := net.SplitHostPort(t.Address); err != nil || port == "" {
		p.Addf(
			"temporal.address",
			"%q is not host:port: write it like 127.0.0.1:7233 (no scheme)",
			t.Address,
		)
	}
	if t.Namespace == "" {
		p.Addf(
			"temporal.namespace",
			"is empty: %s (\"default\" for the dev server)",
			where("temporal.namespace"),
		)
	}
	if key := t.APIKey.Reveal(); key != "" &&
		strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		p.Addf(
			"temporal.api-key",
			"contains whitespace or control characters (a pasted line break?): "+
				"set %s to the key alone",
			EnvName("temporal.api-key"),
		)
	}
	// Temporal Cloud's frontends: <namespace>.<account>.tmprl.cloud:7233
	// with mTLS, or the regional <region>.<cloud>.api.temporal.io:7233 with API keys.
	host, _, _ := net.SplitHostPort(t.Address)
	if strings.HasSuffix(host, ".tmprl.cloud") || strings.HasSuffix(host, ".api.temporal.io") {
		if t.Namespace != "" && !strings.Contains(t.Namespace, ".") {
			p.Addf(
				"temporal.namespace",
				"%q is not a Temporal Cloud namespace: "+
					"Cloud namespaces are <name>.<account-id>, as the Cloud UI shows them",
				t.Namespace,
			)
		}
		if t.APIKey == "" && t.TLS.CertFile == "" {
			p.Addf(
				"temporal.api-key",
				"is not set and neither is temporal.tls.cert-file: "+
					"Temporal Cloud (%s) needs an API key (%s) or a client certificate and key "+
					"(temporal.tls.cert-file, temporal.tls.key-file)",
				host,
				EnvName("temporal.api-key"),
			)
		}
	}
}

// keyPairFix is the advice for an S3 key set without the other of its pair:
// the missing one is key.
func keyPairFix(key string) string {
	return fmt.Sprintf(
		"export %s (or set %s in the config file; never pass credentials as flags), "+
			"or unset both to use the AWS credential chain",
		EnvName(key),
		key,
	)
}

func (c Config) checkStore(p *Problems) {
	s := c.S3
	ep := strings.TrimPrefix(strings.TrimPrefix(s.Endpoint, "https://"), "http://")
	switch {
	case ep == "":
		p.Addf(
			"s3.endpoint",
			"is empty: %s to the S3 server's host:port (127.0.0.1:9000 for `whestbake dev up`)",
			where("s3.endpoint"),
		)
	case strings.Contains(strings.TrimSuffix(ep, "/"), "/"):
		p.Addf(
			"s3.endpoint",
			"%q has a path: give only host:port; the bucket goes in s3.bucket",
			s.Endpoint,
		)
	}
	// Both keys, or neither for the standard AWS chain of environment,
	// shared credentials file and IAM role; one alone is a mistake.
	if s.AccessKey == "" && s.SecretKey != "" {
		p.Addf("s3.access-key", "is not set but s3.secret-key is: %s", keyPairFix("s3.access-key"))
	}
	if s.SecretKey == "" && s.AccessKey != "" {
		p.Addf("s3.secret-key", "is not set but s3.access-key is: %s", keyPairFix("s3.secret-key"))
	}
	switch s.Addressing {
	case store.AddressingAuto, store.AddressingPath, store.AddressingVirtualHost:
	default:
		p.Addf(
			"s3.addressing",
			"%q is unknown: use auto (the client decides), "+
				"path (http://host/bucket/key: MinIO and most on-premise servers) "+
				"or virtual-host (http://bucket.host/key: AWS)",
			s.Addressing,
		)
	}
	checkBucket(p, "s3.bucket", s.Bucket)
}

// SplitKey is the config key of split i: bake.splits[i].
func SplitKey(i int) string { return fmt.Sprintf("bake.splits[%d]", i) }

func checkBucket(p *Problems, key, b string) {
	switch {
	case b == "":
		p.Addf(
			key,
			"is empty: %s to a bucket name (\"whestbake\" for `whestbake dev up`)",
			where(key),
		)
	case !bucketRE.MatchString(b) || strings.Contains(b, ".."):
		p.Addf(
			key,
			"%q is not a valid bucket name: use 3-63 lowercase letters, digits, '.' and '-', "+
				"starting and ending with a letter or digit",
			b,
		)
	}
}

func (c Config) checkQueue(p *Problems) {
	q := c.Bake.GPUQueue
	if q == "" || !nameRE.MatchString(q) {
		p.Addf(
			"bake.gpu-queue",
			"%q is not a task queue name: use letters, digits, '.', '_' and '-' (default %q)",
			q,
			Default().Bake.GPUQueue,
		)
	}
}

// CheckBakeID says why id cannot be a bake ID, nil when it can, without
// naming a flag or a key.
func CheckBakeID(id string) error {
	if len(id) > maxBakeIDLn || !bakeIDRE.MatchString(id) {
		return fmt.Errorf(
			"%q is not usable: use at most %d letters, digits, '.', '_' and '-', "+
				"starting with a letter or digit (it names workflows and object keys)",
			id,
			maxBakeIDLn,
		)
	}
	return nil
}

func (c Config) checkBake(p *Problems) {
	b := c.Bake
	switch {
	case b.ID == "":
		p.Addf("bake.id", "is empty: pass --id ID or %s", where("bake.id"))
	default:
		if err := CheckBakeID(b.ID); err != nil {
			p.Addf("bake.id", "%v", err)
		}
	}
	salt, saltErr := b.Salt(os.Getenv)
	if saltErr != nil {
		*p = append(*p, saltErr.Error())
	}
	specErr := b.Spec(salt).Validate()
	for _, f := range bakeapi.AsFieldErrors(specErr) {
		if f.Field == bakeapi.FieldSeedSalt && saltErr != nil {
			continue // said above, with the reason
		}
		p.Addf(specKeys[f.Field], "%s", f.Problem)
	}
	if specErr == nil {
		limit := int64(c.Worker.MaxMemory)
		if err := rows.CheckMemory(b.Spec(salt), c.Worker.Threads, limit); err != nil {
			p.Addf("bake.width", "and bake.depth: %v (worker.max-memory sets the limit)", err)
		}
	}
	if b.SliceSize < 1 {
		p.Addf(
			"bake.slice-size",
			"= %d: must be at least 1 (MLPs per BakeSlice activity); %s",
			b.SliceSize,
			where("bake.slice-size"),
		)
	}
	if _, err := b.InFlight(); err != nil {
		p.Addf("bake.max-in-flight", "%v; %s", err, where("bake.max-in-flight"))
	}
	c.checkQueue(p)
	c.checkSplits(p)
}

func (c Config) checkSplits(p *Problems) {
	b := c.Bake
	if len(b.Splits) == 0 {
		p.Addf(
			"bake.splits",
			"is empty: list at least one split in the config file, "+
				"e.g. splits: [{name: public, n-mlps: 100, seed: 1}]",
		)
		return
	}
	seen := map[string]bool{}
	for i, s := range b.Splits {
		key := SplitKey(i)
		n := int64(s.NMLPs)
		p.fields(
			bakeapi.ValidateSplit(s.Name, s.Config, n),
			func(f string) string { return key + "." + splitKeys[f] },
		)
		if seen[s.Name] {
			p.Addf(key+".name", "%q appears twice: every split needs its own name", s.Name)
		}
		seen[s.Name] = true
		if s.Seed != nil && s.SeedsFile != "" {
			p.Addf(key, "sets both seed and seeds-file: keep one of them")
		}
	}
	if b.DefaultSplit != "" && !seen[b.DefaultSplit] {
		p.Addf(
			"bake.default-split",
			"%q is not one of the splits: use one of their names, or leave it empty for the first",
			b.DefaultSplit,
		)
	}
}

func (c Config) checkRelease(p *Problems) {
	c.checkHub(p)
	r := c.Release
	if r.Bucket == "" {
		if r.Name != "" || r.Tag != "" {
			p.Addf(
				"release.bucket",
				"is empty but release.name/tag are set: "+
					"set release.bucket (\"releases\" for `whestbake dev up`), "+
					"or remove the release section to skip publishing",
			)
		}
		return
	}
	checkBucket(p, "release.bucket", r.Bucket)
	if r.Name == "" {
		p.Addf("release.name", "is empty: a release needs a dataset name, e.g. name: my-dataset")
	} else if !nameRE.MatchString(r.Name) {
		p.Addf(
			"release.name",
			"%q: use letters, digits, '.', '_' and '-', starting with a letter or digit",
			r.Name,
		)
	}
	if r.Tag == "" {
		p.Addf(
			"release.tag",
			"is empty: releases are immutable, so each needs a tag, e.g. tag: v1 (or %s=v1)",
			EnvName("release.tag"),
		)
	} else if !nameRE.MatchString(r.Tag) {
		p.Addf(
			"release.tag",
			"%q: use letters, digits, '.', '_' and '-', starting with a letter or digit",
			r.Tag,
		)
	}
	if r.Prefix != "" {
		for _, seg := range strings.Split(r.Prefix, "/") {
			if !nameRE.MatchString(seg) {
				p.Addf(
					"release.prefix",
					"%q: use '/'-separated segments of letters, digits, '.', '_' and '-', "+
						"with no leading, trailing or doubled '/'",
					r.Prefix,
				)
				break
			}
		}
	}
	if rel := keys.Release(r.Prefix, r.Name, r.Tag); r.Name != "" && r.Tag != "" &&
		keys.InWorkArea(rel) {
		p.Addf(
			"release.prefix",
			"%q with release.name %q puts the release at %s/, inside bakes/, "+
				"where every bake keeps its working objects "+
				"(a bake would take it for its own dataset, and gc would delete it): "+
				"choose a release.prefix outside bakes/, e.g. datasets",
			r.Prefix,
			r.Name,
			rel,
		)
	}
}

// branchRE is a Hub branch name: segments like nameRE, '/' between them.
var branchRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$`)

// checkHub checks release.hub. The token is the control worker's, so the
// starter does not ask for it: the worker's preflight reads the token file.
func (c Config) checkHub(p *Problems) {
	h := c.Release.Hub
	if h.Repo == "" {
		if h.Tag != "" || h.Private || h.TokenFile != "" {
			p.Addf(
				"release.hub.repo",
				"is empty but other release.hub keys are set: "+
					"set it to the dataset repository (owner/name), "+
					"or remove the release.hub section to skip the Hub",
			)
		}
		return
	}
	if err := hub.CheckRepoID(h.Repo); err != nil {
		p.Addf("release.hub.repo", "%v", err)
	}
	if !branchRE.MatchString(h.Revision) || strings.Contains(h.Revision, "..") {
		p.Addf(
			"release.hub.revision",
			"%q: name an existing branch of the repository, e.g. main",
			h.Revision,
		)
	}
	if h.Tag != "" && !nameRE.MatchString(h.Tag) {
		p.Addf(
			"release.hub.tag",
			"%q: use letters, digits, '.', '_' and '-', starting with a letter or digit, "+
				"or leave it empty for no tag",
			h.Tag,
		)
	}
	if strings.TrimSpace(h.Message) == "" {
		p.Addf(
			"release.hub.message",
			"is empty: the commit needs a message (default %q)",
			hub.DefaultMessage,
		)
	}
	if err := hub.CheckEndpoint(h.Endpoint); err != nil {
		p.Addf("release.hub.endpoint", "%v", err)
	}
}

func (c Config) checkPolicy(p *Problems) {
	o := c.Policy
	for _, d := range []struct {
		key   string
		value bakeapi.Duration
	}{
		{"policy.seeds-timeout", o.SeedsTimeout},
		{"policy.slice-timeout", o.SliceTimeout},
		{"policy.slice-heartbeat", o.SliceHeartbeat},
		{"policy.merge-timeout", o.MergeTimeout},
		{"policy.push-timeout", o.PushTimeout},
		{"policy.retry-initial", o.RetryInitial},
		{"policy.retry-max", o.RetryMax},
		{"policy.filesystem-heartbeat", o.FilesystemHeartbeat},
	} {
		positive(p, d.key, time.Duration(d.value))
	}
	if o.SliceMaxAttempts < 1 {
		p.Addf(
			"policy.slice-max-attempts",
			"= %d: must be at least 1 (unbounded retries would loop forever on a poisoned slice)",
			o.SliceMaxAttempts,
		)
	}
	if o.OtherMaxAttempts < 1 {
		p.Addf(
			"policy.other-max-attempts",
			"= %d: must be at least 1 (unbounded retries would loop forever on a poisoned input)",
			o.OtherMaxAttempts,
		)
	}
	if o.SliceHeartbeat > 0 && o.SliceHeartbeat >= o.SliceTimeout {
		p.Addf(
			"policy.slice-heartbeat",
			"= %s is not below policy.slice-timeout = %s: "+
				"the heartbeat must detect a lost worker long before the attempt times out",
			o.SliceHeartbeat,
			o.SliceTimeout,
		)
	}
	if o.FilesystemHeartbeat > 0 &&
		o.FilesystemHeartbeat >= min(o.SeedsTimeout, o.MergeTimeout, o.PushTimeout) {
		p.Addf(
			"policy.filesystem-heartbeat",
			"= %s must be below policy.seeds-timeout, merge-timeout and push-timeout",
			o.FilesystemHeartbeat,
		)
	}
	if o.RetryInitial > o.RetryMax {
		p.Addf(
			"policy.retry-initial",
			"= %s is above policy.retry-max = %s: lower it or raise retry-max",
			o.RetryInitial,
			o.RetryMax,
		)
	}
}

// positive rejects zero, negative and bare-number durations, which weak
// decoding reads as nanoseconds.
func positive(p *Problems, key string, d time.Duration) {
	if d < time.Millisecond {
		p.Addf(key, "= %s: must be a positive duration with a unit, such as 30s, 5m or 2h", d)
	}
}
