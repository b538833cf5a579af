package settings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/temporalconn"
)

// testSecret stands for a real credential; no output may contain it.
const testSecret = "s3cr3t-Zq9-never-print-me"

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// clearEnv keeps a developer's WHESTBAKE_* variables out of the tests.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, EnvPrefix+"_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// base is a valid starter config; tests break one thing at a time.
const base = `
s3:
  access-key: bakeuser
  secret-key: ` + testSecret + `
bake:
  id: t-1
  width: 8
  depth: 2
  n-samples: 1000
  splits:
    - {name: public, n-mlps: 4, seed: 1}
release: {bucket: releases, prefix: datasets, name: demo, tag: v1}
`

func load(t *testing.T, yaml string) (Config, error) {
	t.Helper()
	clearEnv(t)
	return Load(writeFile(t, t.TempDir(), "c.yaml", yaml), nil)
}

func TestDemoConfig(t *testing.T) {
	clearEnv(t)
	cfg, err := Load("../../configs/demo.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The values the demo is specified with.
	if in.Spec.Width != 64 || in.Spec.Depth != 4 || in.Spec.NSamples != 200_000 ||
		in.Spec.Sampler != "philox" ||
		in.Spec.Dot != "" {
		t.Errorf("shape = %+v", in.Spec)
	}
	if in.SliceSize != 2 || in.MaxInFlight != 2 || in.GPUQueue != bakeapi.GPUQueue {
		t.Errorf(
			"slice-size %d, max-in-flight %d, queue %q",
			in.SliceSize,
			in.MaxInFlight,
			in.GPUQueue,
		)
	}
	if len(in.Splits) != 2 {
		t.Fatalf("splits = %+v", in.Splits)
	}
	pub, hold := in.Splits[0], in.Splits[1]
	if pub.Name != "public" || pub.Config != "default" || pub.NMLPs != 4 || pub.Seed == nil ||
		*pub.Seed != 1 ||
		pub.SeedsKey != "" {
		t.Errorf("public = %+v", pub)
	}
	if hold.Name != "holdout" || hold.Config != "holdout" || hold.NMLPs != 3 || hold.Seed == nil ||
		*hold.Seed != 2 {
		t.Errorf("holdout = %+v", hold)
	}
	wantRelease := bakeapi.ReleaseSpec{
		Bucket: "releases",
		Prefix: "datasets",
		Name:   "demo",
		Tag:    "v1",
	}
	if in.Release != wantRelease {
		t.Errorf("release = %+v", in.Release)
	}
	if in.Policy.SliceHeartbeat.String() != "10s" || in.Policy.RetryInitial.String() != "1s" ||
		in.Policy.SliceMaxAttempts != 5 {
		t.Errorf("policy = %+v", in.Policy)
	}
}

// The example documents every key: it loads (unknown keys would fail) and names each one.
func TestExampleDocumentsEveryKey(t *testing.T) {
	clearEnv(t)
	if _, err := Load("../../configs/example.yaml", nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../configs/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for k := range leafKeys(Default()) {
		leaf := k[strings.LastIndex(k, ".")+1:]
		if !strings.Contains(string(data), leaf+":") {
			t.Errorf("configs/example.yaml does not document %s", k)
		}
	}
}

func TestBadConfigs(t *testing.T) {
	t.Setenv(dataset.SaltEnv, "")
	good := writeFile(t, t.TempDir(), "good.json", "[5, 6, 7, 8]")
	cases := []struct {
		name, edit, want string
	}{
		{
			"empty id",
			"id: t-1|id: ''",
			"bake.id is empty: pass --id ID or set bake.id in the config file or WHESTBAKE_BAKE_ID",
		},
		{"id with slash", "id: t-1|id: a/b", `bake.id "a/b" is not usable`},
		{"id starting with dot", "id: t-1|id: ..x", `bake.id "..x" is not usable`},
		{"zero width", "width: 8|width: 0", "bake.width is missing or 0"},
		{"huge depth", "depth: 2|depth: 100000", "bake.depth = 100000: must be in [1, 1024]"},
		{
			"max-memory not a size",
			"release: {|worker: {max-memory: 64GB}\nrelease: {",
			`"64GB" is not a size: give a number with an optional unit B, KiB, MiB, GiB or TiB`,
		},
		{"fractional samples", "n-samples: 1000|n-samples: 2.5", `"2.5" is not a whole number`},
		{
			"zero samples spelled as text",
			"n-samples: 1000|n-samples: '0e3'",
			"bake.n-samples is missing or 0",
		},
		{
			"negative samples",
			"n-samples: 1000|n-samples: -5",
			"bake.n-samples = -5: must be in [1, 1125899906842624]",
		},
		{
			"unknown sampler",
			"n-samples: 1000|n-samples: 1000\n  sampler: gauss",
			`bake.sampler "gauss" is unknown: use philox`,
		},
		{
			"numpy with chunk size",
			"n-samples: 1000|n-samples: 1000\n  sampler: numpy\n  chunk-size: 64",
			"bake.chunk-size = 64: the numpy sampler always uses whestbench's chunk rule",
		},
		{
			"numpy bad dot",
			"n-samples: 1000|n-samples: 1000\n  sampler: numpy\n  dot-product: fast",
			`bake.dot-product "fast" is unknown`,
		},
		{
			"slice size 0",
			"n-samples: 1000|n-samples: 1000\n  slice-size: 0",
			"bake.slice-size = 0: must be at least 1",
		},
		{
			"max in flight 0",
			"n-samples: 1000|n-samples: 1000\n  max-in-flight: 0",
			"bake.max-in-flight = 0: must be auto (one slice per worker polling bake.gpu-queue",
		},
		{
			"max in flight text",
			"n-samples: 1000|n-samples: 1000\n  max-in-flight: many",
			"bake.max-in-flight = many: must be auto",
		},
		{"no splits", "    - {name: public, n-mlps: 4, seed: 1}|", "bake.splits is empty"},
		{
			"bad split name",
			"name: public|name: Public",
			`bake.splits[0].name "Public" cannot be loaded`,
		},
		// datasets refuses a hyphen in a split name (splits.py NamedSplit):
		// refused before anything starts, with a name that loads.
		{
			"hyphenated split name",
			"name: public|name: mini-a",
			`bake.splits[0].name "mini-a" cannot be loaded: ` +
				`a split name is a lowercase ASCII letter ` +
				`followed by lowercase ASCII letters and digits, [a-z][a-z0-9]*` +
				` (Hugging Face datasets refuses '-' in a split name, ` +
				`whestbench refuses '_', '.' and capitals); use "minia"`,
		},
		{
			"bad config name",
			"name: public|name: public, config: 'x y'",
			`bake.splits[0].config "x y" does not match`,
		},
		{
			"duplicate split",
			"    - {name: public, n-mlps: 4, seed: 1}|" +
				"    - {name: public, n-mlps: 4, seed: 1}\n" +
				"    - {name: public, n-mlps: 2}",
			`bake.splits[1].name "public" appears twice`,
		},
		{
			"seed and seeds file",
			"seed: 1|seed: 1, seeds-file: " + good,
			"bake.splits[0] sets both seed and seeds-file",
		},
		{"negative seed", "seed: 1|seed: -1", "-1 is negative: give a non-negative integer"},
		{"fractional seed", "seed: 1|seed: 1.5", "1.5 is not a whole number"},
		{
			"bad default split",
			"n-samples: 1000|n-samples: 1000\n  default-split: private",
			`bake.default-split "private" is not one of the splits`,
		},
		{"missing tag", "tag: v1|tag: ''", "release.tag is empty: releases are immutable"},
		{
			"tag without bucket",
			"bucket: releases|bucket: ''",
			"release.bucket is empty but release.name/tag are set",
		},
		{
			"bad release bucket",
			"bucket: releases|bucket: Rel_eases",
			`release.bucket "Rel_eases" is not a valid bucket name`,
		},
		{"bad prefix", "prefix: datasets|prefix: /datasets", `release.prefix "/datasets"`},
		{
			"release inside a bake",
			"prefix: datasets|prefix: bakes",
			`release.prefix "bakes" with release.name "demo" puts the release at bakes/demo/v1/, ` +
				`inside bakes/`,
		},
		{
			"release named into the bakes",
			"prefix: datasets, name: demo|prefix: '', name: bakes",
			`release.prefix "" with release.name "bakes" puts the release at bakes/v1/, ` +
				`inside bakes/`,
		},
		{
			"no secret",
			"secret-key: " + testSecret + "|secret-key: ''",
			"s3.secret-key is not set but s3.access-key is: export WHESTBAKE_S3_SECRET_KEY",
		},
		{
			"bad addressing",
			"s3:|s3:\n  addressing: dns",
			`s3.addressing "dns" is unknown: use auto`,
		},
		{
			"API key with a line break",
			"s3:|temporal: {api-key: \"abc\\n\"}\ns3:",
			"temporal.api-key contains whitespace",
		},
		{
			"Cloud namespace",
			"s3:|temporal: {address: 'us-east-1.aws.api.temporal.io:7233', api-key: k}\ns3:",
			`temporal.namespace "default" is not a Temporal Cloud namespace`,
		},
		{
			"Cloud without credentials",
			"s3:|temporal: {address: 'bakes.a1b2c.tmprl.cloud:7233', namespace: bakes.a1b2c}\ns3:",
			"Temporal Cloud (bakes.a1b2c.tmprl.cloud) needs an API key",
		},
		{
			"bad endpoint",
			"s3:|s3:\n  endpoint: http://minio:9000/whestbake",
			`s3.endpoint "http://minio:9000/whestbake" has a path`,
		},
		{
			"bad temporal address",
			"s3:|temporal: {address: 'temporal.example.com'}\ns3:",
			`temporal.address "temporal.example.com" is not host:port`,
		},
		{
			"heartbeat above timeout",
			"s3:|policy: {slice-heartbeat: 2h, slice-timeout: 1h}\ns3:",
			"policy.slice-heartbeat = 2h0m0s is not below policy.slice-timeout = 1h0m0s",
		},
		{
			"duration without unit",
			"s3:|policy: {push-timeout: 30}\ns3:",
			"policy.push-timeout = 30ns: must be a positive duration with a unit",
		},
		{
			"zero attempts",
			"s3:|policy: {slice-max-attempts: 0}\ns3:",
			"policy.slice-max-attempts = 0: must be at least 1",
		},
		{"unknown key", "n-samples: 1000|n-samples: 1000\n  n_samples: 1000", "n_samples"},
		{
			"4.0 without a salt",
			"n-samples: 1000|n-samples: 1000\n  seed-protocol: 4.0",
			"WHEST_SEED_SALT is not set: bake.seed-protocol 4.0 takes the salt",
		},
		{
			"protocol 2.0",
			"n-samples: 1000|n-samples: 1000\n  seed-protocol: '2.0'",
			"bake.seed-protocol 2.0 is whestbench's legacy protocol",
		},
		{
			"unknown protocol",
			"n-samples: 1000|n-samples: 1000\n  seed-protocol: 4",
			`bake.seed-protocol "4" is unknown`,
		},
		{
			"withheld salt under 3.0",
			"n-samples: 1000|n-samples: 1000\n  withhold-salt: true\n  salt-id: h",
			"bake.withhold-salt is only meaningful for seed protocol 4.0",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(c.edit, "|")
			if !strings.Contains(base, old) {
				t.Fatalf("edit %q does not apply", old)
			}
			cfg, err := load(t, strings.Replace(base, old, repl, 1))
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}

func TestValidBaseAndAllProblemsAtOnce(t *testing.T) {
	cfg, err := load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("base config rejected: %v", err)
	}
	// A split takes any number of slices: its workflow continues as new.
	big := cfg
	big.Bake.Splits = []Split{
		{
			Name:   "public",
			Config: "default",
			NMLPs:  1_000_000,
			Seed:   cfg.Bake.Splits[0].Seed,
		},
	}
	if err := big.Validate(); err != nil {
		t.Fatalf("a split of a million one-MLP slices rejected: %v", err)
	}
	cfg.Bake.Width = 0
	cfg.Bake.SliceSize = 0
	cfg.Release.Tag = ""
	err = cfg.Validate()
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
}

// Validation is pure: it reads none of the files the config names and
// probes no directory, so a config naming files that do not exist is valid
// here; internal/preflight reads them before any work (its tests hold the
// errors).
func TestValidationReadsNoFiles(t *testing.T) {
	absent := filepath.Join(t.TempDir(), "absent")
	cfg, err := load(t, strings.Replace(base, "seed: 1", "seeds-file: "+absent+".json", 1))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Temporal.TLS = TemporalTLS{CAFile: absent + "-ca.pem", KeyFile: absent + "-key.pem"}
	cfg.S3.CAFile = absent + "-s3-ca.pem"
	cfg.Release.Hub = Hub{
		Repo:      "alice/gt",
		Revision:  "main",
		Message:   "m",
		Endpoint:  "https://huggingface.co",
		TokenFile: absent + "-token",
	}
	cfg.Worker.Role = RoleAll
	cfg.Worker.Device = "cpu"
	cfg.Worker.ScratchDir = absent
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate read a file: %v", err)
	}
	if err := cfg.ValidateWorker(); err != nil {
		t.Errorf("ValidateWorker read a file: %v", err)
	}
	if err := cfg.ValidateTemporal(); err != nil {
		t.Errorf("ValidateTemporal read a file: %v", err)
	}
	if err := cfg.ValidateStore(); err != nil {
		t.Errorf("ValidateStore read a file: %v", err)
	}
}

// A shape above worker.max-memory is refused; unset, the limit is the
// host's, which the preflight step reads, so validation alone sets none.
func TestShapeAboveMaxMemory(t *testing.T) {
	cfg, err := load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bake.Width = 16384
	cfg.Bake.Depth = 1024
	if err := cfg.Validate(); err != nil {
		t.Errorf("no worker.max-memory: %v", err)
	}
	cfg.Worker.MaxMemory = 1 << 30
	want := "bake.width and bake.depth: a 16384×1024 MLP needs about"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("worker.max-memory 1GiB: %v, want %q", err, want)
	}
}

func TestSeedsFileRelativeToConfigAndUploadKey(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	writeFile(t, dir, "pub.json", "[11, 12, 13, 14]")
	cfg, err := Load(
		writeFile(t, dir, "c.yaml", strings.Replace(base, "seed: 1", "seeds-file: pub.json", 1)),
		nil,
	)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "pub.json"); cfg.Bake.Splits[0].SeedsFile != want {
		t.Errorf("seeds-file = %s, want %s", cfg.Bake.Splits[0].SeedsFile, want)
	}
	in, err := BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := in.Splits[0]; s.SeedsKey != keys.Bake("t-1").InputSeeds("public") || s.Seed != nil {
		t.Errorf("split = %+v", s)
	}
}

// Protocol 4.0: the salt comes from WHEST_SEED_SALT and only its SHA-256
// reaches the workflow input; a bad salt is one problem, named after the
// variable and without its value.
func TestSeedProtocolV4(t *testing.T) {
	salt := strings.Repeat("5a", 32)
	sum := sha256.Sum256(bytes.Repeat([]byte{0x5a}, 32))
	v4 := strings.Replace(
		base,
		"n-samples: 1000",
		"n-samples: 1000\n  seed-protocol: 4.0\n  withhold-salt: true\n  salt-id: holdout-1",
		1,
	)
	t.Setenv(dataset.SaltEnv, salt)
	cfg, err := load(t, v4)
	if err != nil {
		t.Fatal(err)
	}
	in, err := BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := bakeapi.Salt{SHA256: hex.EncodeToString(sum[:]), Withhold: true, ID: "holdout-1"}
	if in.Spec.SeedProtocol != bakeapi.SeedProtocolV4 || in.Spec.Salt != want {
		t.Errorf("spec %+v", in.Spec)
	}
	if b, _ := json.Marshal(in); strings.Contains(strings.ToLower(string(b)), salt) {
		t.Errorf("the workflow input holds the salt: %s", b)
	}
	for _, bad := range []struct{ env, want string }{
		{"xyz", "WHEST_SEED_SALT is not a hex string"},
		{"abcd", "WHEST_SEED_SALT is 2 bytes: bake with a 32-byte salt"},
	} {
		t.Setenv(dataset.SaltEnv, bad.env)
		err := cfg.Validate()
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 ||
			!strings.Contains(err.Error(), bad.want) ||
			strings.Contains(err.Error(), bad.env) {
			t.Errorf("salt %q: %v", bad.env, err)
		}
	}
	// A 3.0 bake ignores a salt left in the environment.
	t.Setenv(dataset.SaltEnv, salt)
	cfg, err = load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	if in, err := BakeInput(cfg); err != nil || in.Spec.Salt != (bakeapi.Salt{}) ||
		in.Spec.Protocol() != bakeapi.SeedProtocolV3 {
		t.Errorf("3.0 bake: %+v, %v", in.Spec, err)
	}
}

func TestCountSpellings(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want int64
	}{
		{"1_000", 1000},
		{"1e9", 1_000_000_000},
		{"2.5e6", 2_500_000},
		{"'1_000_000'", 1_000_000},
		{"123", 123},
	} {
		cfg, err := load(t, strings.Replace(base, "n-samples: 1000", "n-samples: "+c.yaml, 1))
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if int64(cfg.Bake.NSamples) != c.want {
			t.Errorf("n-samples: %s = %d, want %d", c.yaml, cfg.Bake.NSamples, c.want)
		}
	}
}

// Every key can come from the environment, including keys the file does not mention.
func TestEnvSetsEveryKey(t *testing.T) {
	clearEnv(t)
	want := map[string]any{}
	for key, def := range leafKeys(Default()) {
		var env string
		var val any
		switch def.(type) {
		case string:
			env = "x-" + strings.ReplaceAll(key, ".", "-")
			val = env
		case bakeapi.SeedProtocol:
			env, val = "4.0", bakeapi.SeedProtocolV4
		case Secret:
			env, val = "env-"+key, Secret("env-"+key)
		case int:
			env, val = "7", 7
		case int32:
			env, val = "9", int32(9)
		case Count:
			env, val = "3_000", Count(3000)
		case ByteSize:
			env, val = "2GiB", ByteSize(2<<30)
		case bool:
			env, val = "true", true
		case time.Duration:
			env, val = "90s", 90*time.Second
		case bakeapi.Duration:
			env, val = "90s", bakeapi.Duration(90*time.Second)
		default:
			t.Fatalf("key %s has an untested type %T", key, def)
		}
		t.Setenv(EnvName(key), env)
		want[key] = val
	}
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := leafKeys(cfg)
	for key, w := range want {
		if got[key] != w {
			t.Errorf("%s from %s: got %v, want %v", key, EnvName(key), got[key], w)
		}
	}
	if EnvName("s3.secret-key") != "WHESTBAKE_S3_SECRET_KEY" ||
		EnvName("bake.n-samples") != "WHESTBAKE_BAKE_N_SAMPLES" {
		t.Errorf("env names: %s %s", EnvName("s3.secret-key"), EnvName("bake.n-samples"))
	}
}

func TestPrecedenceFlagOverEnvOverFile(t *testing.T) {
	clearEnv(t)
	file := writeFile(t, t.TempDir(), "c.yaml", base)
	t.Setenv("WHESTBAKE_BAKE_ID", "from-env")
	t.Setenv("WHESTBAKE_BAKE_WIDTH", "16")
	cfg, err := Load(file, map[string]string{"bake.id": "from-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bake.ID != "from-flag" || cfg.Bake.Width != 16 || cfg.Bake.Depth != 2 {
		t.Errorf("id %q width %d depth %d", cfg.Bake.ID, cfg.Bake.Width, cfg.Bake.Depth)
	}
}

func TestWorkerValidation(t *testing.T) {
	clearEnv(t)
	cfg := Default()
	cfg.S3.AccessKey = "u"
	cfg.S3.SecretKey = testSecret
	if err := cfg.ValidateWorker(); err == nil ||
		!strings.Contains(err.Error(), "worker.role is not set: pass --role control") {
		t.Errorf("missing role: %v", err)
	}
	cfg.Worker.Role = RoleGPU
	cfg.Worker.Device = "tpu"
	if err := cfg.ValidateWorker(); err == nil ||
		!strings.Contains(err.Error(), `worker.device "tpu" is unknown: use auto, cpu or cuda`) {
		t.Errorf("bad device: %v", err)
	}
	cfg.Worker.Device = "cpu"
	cfg.Worker.Threads = -1
	if err := cfg.ValidateWorker(); err == nil ||
		!strings.Contains(err.Error(), "worker.threads = -1") {
		t.Errorf("bad threads: %v", err)
	}
	cfg.Worker.Threads = 2
	if err := cfg.ValidateWorker(); err != nil {
		t.Errorf("valid worker config rejected: %v", err)
	}
}

// A YAML syntax error names the line that holds it: yaml.v3 alone names the
// line of the enclosing construct, often one too early, or none on line 1.
func TestSyntaxErrorsNameTheirLine(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{
			"unclosed bracket",
			"bake:\n  width: 8\n  depth: 2\n  n-samples: [1\n  slice-size: 3\n",
			"line 4: did not find expected ',' or ']'",
		},
		{
			"tab indent",
			"bake:\n  width: 8\n\tdepth: 2\n",
			"line 3: found a tab character that violates indentation",
		},
		{
			"over-indented key",
			"bake:\n  width: 8\n  depth: 2\n   x: 3\n",
			"line 4: mapping values are not allowed in this context",
		},
		{
			"list item indent",
			"bake:\n  splits:\n    - name: a\n     n-mlps: 3\n",
			"line 4: did not find expected '-' indicator",
		},
		{
			"unclosed quote",
			"bake:\n  id: \"abc\n  width: 8\n",
			"line 2: found unexpected end of stream",
		},
		{"first line", ": x\n", "line 1: did not find expected key"},
		{
			"after a multi-line value",
			"bake:\n  splits: [{name: a,\n    n-mlps: 2}]\n  width: : 8\n",
			"line 4: mapping values are not allowed in this context",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.yaml)
			if err == nil || !strings.Contains(err.Error(), "c.yaml: "+c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// Unknown keys are listed with their lines and the key they most likely
// meant: a sibling a typo away (with _ read as -), or the same name at
// another level.
func TestUnknownKeysSuggestTheClosestKey(t *testing.T) {
	cfg := strings.Replace(
		base,
		"  width: 8\n",
		"  widht: 8\n  N_Samples: 5\n  endpoint: x\n  colour: red\n",
		1,
	)
	cfg = strings.Replace(cfg, "n-mlps: 4", "n-mlp: 4", 1) + "Temporl: {}\n"
	_, err := load(t, cfg)
	if err == nil {
		t.Fatal("accepted unknown keys")
	}
	for _, want := range []string{
		"6 keys are not config keys:",
		"line 7: bake.widht is not a config key; did you mean bake.width?",
		"line 8: bake.N_Samples is not a config key; did you mean bake.n-samples?",
		"line 9: bake.endpoint is not a config key; did you mean s3.endpoint?",
		"line 10: bake.colour is not a config key (bake takes id, width, depth,",
		"line 14: bake.splits[0].n-mlp is not a config key; did you mean bake.splits[0].n-mlps?",
		"line 16: Temporl is not a config key; did you mean temporal?",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), testSecret) {
		t.Errorf("error shows the secret: %v", err)
	}
}

// Top-level values that are no section are the flag values of an older
// whestbake's local verbs: the error lists them and names the migration.
func TestFlagValueFilesNameTheirMigration(t *testing.T) {
	for name, cfg := range map[string]string{
		"flat":  "width: 8\nn-samples: 1e9\nbake: {depth: 2}\n",
		"mixed": base + "threads: 4\n",
	} {
		_, err := load(t, cfg)
		if err == nil ||
			!strings.Contains(err.Error(), "at the top level: these are flag values") ||
			!strings.Contains(err.Error(), "whestbake config migrate FILE") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := load(t, "width: 8\n"); err == nil ||
		!strings.Contains(err.Error(), "width (line 1)") {
		t.Errorf("flat file: %v", err)
	}
	if _, err := load(t, "width = 8\n"); err == nil ||
		!strings.Contains(err.Error(), "not a YAML mapping") {
		t.Errorf("TOML file: %v", err)
	}
}

// max-in-flight is auto unless a number is given; the workflow input says auto with 0.
func TestMaxInFlight(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want int
	}{
		{"", 0},
		{"  max-in-flight: auto\n", 0},
		{"  max-in-flight: AUTO\n", 0},
		{"  max-in-flight: 64\n", 64},
		{"  max-in-flight: '1024'\n", 1024},
	} {
		cfg, err := load(
			t,
			strings.Replace(base, "  n-samples: 1000\n", "  n-samples: 1000\n"+c.yaml, 1),
		)
		if err != nil {
			t.Fatal(err)
		}
		in, err := BakeInput(cfg)
		if err != nil || in.MaxInFlight != c.want {
			t.Errorf("%q: max-in-flight %d (%v), want %d", c.yaml, in.MaxInFlight, err, c.want)
		}
	}
}

func TestHubSection(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "hf-token", "hf_settings_token\n")
	withHub := func(hub string) string {
		return strings.Replace(base, "tag: v1}", "tag: v1, hub: "+hub+"}", 1)
	}
	cfgFile := writeFile(
		t,
		dir,
		"c.yaml",
		withHub("{repo: alice/gt, tag: v1, private: true, replace: true, token-file: hf-token}"),
	)
	clearEnv(t)
	cfg, err := Load(cfgFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Release.Hub.TokenFile != filepath.Join(dir, "hf-token") {
		t.Errorf("token-file %s, want it relative to the config file", cfg.Release.Hub.TokenFile)
	}
	in, err := BakeInput(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := bakeapi.HubSpec{
		Repo:     "alice/gt",
		Revision: "main",
		Tag:      "v1",
		Message:  "Upload whestbench dataset",
		Endpoint: "https://huggingface.co",
		Private:  true,
		Replace:  true,
	}
	if in.Hub == nil || *in.Hub != want {
		t.Errorf("workflow input Hub %+v, want %+v", in.Hub, want)
	}
	data, _ := json.Marshal(in)
	if strings.Contains(string(data), "hf_settings_token") ||
		strings.Contains(string(data), "hf-token") {
		t.Errorf("the workflow input carries the token or its file: %s", data)
	}

	noHub, err := load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	if in, err := BakeInput(noHub); err != nil || in.Hub != nil {
		t.Errorf("no release.hub: input Hub %+v (%v), want none", in.Hub, err)
	}

	for _, c := range []struct{ hub, want string }{
		{"{tag: v1}", "release.hub.repo is empty but other release.hub keys are set"},
		{"{repo: justname}", `release.hub.repo "justname" is not a Hub repository id`},
		{"{repo: a/b, tag: 'v 1'}", `release.hub.tag "v 1"`},
		{"{repo: a/b, revision: '../x'}", `release.hub.revision "../x"`},
		{
			"{repo: a/b, endpoint: 'ftp://x'}",
			`release.hub.endpoint "ftp://x" is not an http(s) URL`,
		},
		{
			"{repo: a/b, endpoint: 'http://hub.example.org'}",
			`release.hub.endpoint "http://hub.example.org" is plain http to another host`,
		},
		{"{repo: a/b, message: ''}", "release.hub.message is empty"},
	} {
		cfg, err := load(t, withHub(c.hub))
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hub %s: %v, want %q", c.hub, err, c.want)
		}
	}
}

// The temporal.* keys convert one for one into the connection's own config,
// whose messages name each key's variable as Load reads it.
func TestTemporalConn(t *testing.T) {
	tc := Temporal{
		Address:   "frontend:7233",
		Namespace: "bakes.acct",
		APIKey:    testSecret,
		TLS: TemporalTLS{
			Enabled:    true,
			CAFile:     "ca.pem",
			ServerName: "frontend",
			CertFile:   "c.pem",
			KeyFile:    "k.pem",
		},
	}
	c := tc.Conn()
	want := temporalconn.Config{
		Address:   "frontend:7233",
		Namespace: "bakes.acct",
		APIKey:    testSecret,
		TLS: temporalconn.TLS{
			Enabled:    true,
			CAFile:     "ca.pem",
			ServerName: "frontend",
			CertFile:   "c.pem",
			KeyFile:    "k.pem",
		},
	}
	if c.Address != want.Address || c.Namespace != want.Namespace || c.APIKey != want.APIKey ||
		c.TLS != want.TLS {
		t.Errorf("Conn() = %+v, want %+v", c, want)
	}
	if got := c.EnvName("temporal.api-key"); got != "WHESTBAKE_TEMPORAL_API_KEY" {
		t.Errorf("EnvName(temporal.api-key) = %s", got)
	}
}
