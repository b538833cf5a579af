package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/hostinfo"
	"github.com/whestbake/whestbake/internal/settings"
)

// testSecret stands for a real credential; no output may contain it.
const testSecret = "s3cr3t-Zq9-never-print-me"

// demo is configs/demo.yaml, a valid config that tests break one thing at
// a time, with no WHESTBAKE_* variable of the developer's in the way and
// testSecret as its S3 secret.
func demo(t *testing.T) settings.Config {
	t.Helper()
	for _, key := range settings.Keys() {
		t.Setenv(settings.EnvName(key), "")
		os.Unsetenv(settings.EnvName(key))
	}
	t.Setenv(dataset.SaltEnv, "")
	cfg, err := settings.Load("../../configs/demo.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.S3.SecretKey = testSecret
	return cfg
}

// seedsFile makes split 0 of cfg take its seeds from a file holding body.
func seedsFile(t *testing.T, body string) func(*settings.Config) {
	return func(cfg *settings.Config) {
		path := filepath.Join(t.TempDir(), "seeds.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg.Bake.Splits[0].Seed = nil
		cfg.Bake.Splits[0].SeedsFile = path
	}
}

// What only the files and the host can say fails the starter's preflight,
// named by its key, while the validator alone accepts it (it reads no
// file).
func TestBakeReadsTheFilesTheConfigNames(t *testing.T) {
	absent := filepath.Join(t.TempDir(), "absent")
	for _, c := range []struct {
		name string
		edit func(*settings.Config)
		want string
	}{
		{"shape above the host's memory", func(cfg *settings.Config) {
			cfg.Bake.Width = 16384
			cfg.Bake.Depth = 1024
		}, "bake.width and bake.depth: a 16384×1024 MLP needs about"},
		{"missing seeds file", func(cfg *settings.Config) {
			cfg.Bake.Splits[0].Seed = nil
			cfg.Bake.Splits[0].SeedsFile = absent + ".json"
		}, "bake.splits[0].seeds-file cannot be read"},
		{
			"duplicate seeds",
			seedsFile(t, "[5, 6, 5, 7]"),
			"contains duplicate at indices [0, 2]: both = 5",
		},
		{"short seeds file", seedsFile(t, "[5, 6]"), "has 2 seeds, expected n-mlps = 4"},
		{"seeds file not JSON", seedsFile(t, "5, 6, 7, 8"), "extra data after the JSON array"},
		{"missing S3 CA", func(cfg *settings.Config) { cfg.S3.CAFile = absent + "-ca.pem" },
			"s3.ca-file cannot be read"},
		{
			"missing Temporal CA",
			func(cfg *settings.Config) { cfg.Temporal.TLS.CAFile = absent + "-ca.pem" },
			"temporal.tls.ca-file cannot be read",
		},
		{"TLS key without cert", func(cfg *settings.Config) { cfg.Temporal.TLS.KeyFile = "k.pem" },
			"temporal.tls.cert-file is empty but temporal.tls.key-file is set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := demo(t)
			c.edit(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("the validator rejected what only preflight can check: %v", err)
			}
			_, err := Bake(cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "invalid configuration: ") {
				t.Errorf("not worded as the validator's errors: %v", err)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}

// A config wrong in its values and in its files gets one error listing
// both, as when validation read the files itself.
func TestProblemsOfValuesAndFilesAtOnce(t *testing.T) {
	cfg := demo(t)
	absent := filepath.Join(t.TempDir(), "absent")
	cfg.Bake.Splits[0].Seed = nil
	cfg.Bake.Splits[0].SeedsFile = absent + ".json"
	cfg.Bake.Width = 0
	cfg.S3.CAFile = absent + "-ca.pem"
	_, err := Bake(cfg)
	var ce *settings.Error
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("want 3 problems in one settings.Error, got %v", err)
	}
	for _, want := range []string{
		"bake.width is missing or 0",
		"s3.ca-file cannot be read",
		"bake.splits[0].seeds-file cannot be read",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if in, err := Bake(demo(t)); err != nil || in.BakeID != "demo" {
		t.Errorf("valid config: input %+v, %v", in, err)
	}
}

// The read-only verbs check only what they connect to: the Temporal verbs
// its TLS files, the S3 verbs the store's CA.
func TestTemporalAndStoreReadTheirOwnFiles(t *testing.T) {
	cfg := demo(t)
	absent := filepath.Join(t.TempDir(), "absent.pem")
	cfg.Temporal.TLS.CAFile = absent
	if err := Temporal(cfg); err == nil ||
		!strings.Contains(err.Error(), "temporal.tls.ca-file cannot be read") {
		t.Errorf("Temporal with a missing CA file: %v", err)
	}
	if err := Store(cfg); err != nil {
		t.Errorf("Store read a Temporal file: %v", err)
	}
	cfg.Temporal.TLS.CAFile = ""
	cfg.S3.CAFile = absent
	if err := Store(cfg); err == nil ||
		!strings.Contains(err.Error(), "s3.ca-file cannot be read") {
		t.Errorf("Store with a missing CA file: %v", err)
	}
	if err := Temporal(cfg); err != nil {
		t.Errorf("Temporal read the store's file: %v", err)
	}
}

// worker.scratch-dir is checked when the worker starts: a directory this
// process can create and remove files in, or an error that names the key,
// the path and what is wrong with it.
func TestWorkerScratchDirIsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "read-only")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 { // root writes through modes; sysfs refuses new files to anyone
		readOnly = "/sys"
	}
	for _, c := range []struct {
		name, scratch, tmpdir, want string
	}{
		{"a writable directory", dir, "", ""},
		{
			"missing",
			filepath.Join(dir, "nope"),
			"",
			`worker.scratch-dir "` + filepath.Join(dir, "nope") +
				`" does not exist: point worker.scratch-dir at`,
		},
		{"a file", file, "", `worker.scratch-dir "` + file + `" is not a directory`},
		{
			"not writable",
			readOnly,
			"",
			`worker.scratch-dir "` + readOnly + `" is not writable by this worker`,
		},
		{
			"unset: TMPDIR, checked the same",
			"",
			filepath.Join(dir, "gone"),
			`worker.scratch-dir is unset, so the system's temporary directory "` +
				filepath.Join(dir, "gone") + `" (TMPDIR) is used, and it does not exist`,
		},
		{"unset: a good TMPDIR", "", dir, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := demo(t)
			if c.tmpdir != "" {
				t.Setenv("TMPDIR", c.tmpdir)
			}
			cfg.Worker.Role = settings.RoleGPU
			cfg.Worker.Device = "cpu"
			cfg.Worker.ScratchDir = c.scratch
			if err := cfg.ValidateWorker(); err != nil {
				t.Fatalf("the validator probed the directory: %v", err)
			}
			_, err := Worker(cfg)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			left, _ := filepath.Glob(filepath.Join(cfg.Worker.Scratch(), ".whestbake-probe-*"))
			if len(left) > 0 {
				t.Errorf("the check left %v behind", left)
			}
		})
	}
}

// A control worker reads release.hub.token-file at start (HubPush reads it
// at each push); a GPU worker, which pushes nothing, does not.
func TestWorkerReadsTheHubTokenFileWhenItPushes(t *testing.T) {
	dir := t.TempDir()
	cfg := demo(t)
	cfg.Worker.ScratchDir = dir
	cfg.Release.Hub.Repo = "alice/gt"
	cfg.Release.Hub.TokenFile = filepath.Join(dir, "hf-token")
	token := []byte("hf_preflight_token\n")
	if err := os.WriteFile(cfg.Release.Hub.TokenFile, token, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Worker.Role = settings.RoleControl
	if _, err := Worker(cfg); err != nil {
		t.Errorf("control worker with a token file: %v", err)
	}
	cfg.Release.Hub.TokenFile = filepath.Join(dir, "missing")
	if err := cfg.ValidateWorker(); err != nil {
		t.Fatalf("the validator read the token file: %v", err)
	}
	if _, err := Worker(cfg); err == nil ||
		!strings.Contains(err.Error(), "release.hub.token-file") {
		t.Errorf("missing token file: %v", err)
	}
	cfg.Worker.Role = settings.RoleGPU
	if _, err := Worker(cfg); err != nil {
		t.Errorf("a GPU worker read the token file: %v", err)
	}
}

// worker.max-memory left unset is the host's limit; a value given stands.
func TestWorkerMaxMemoryDefaultsToTheHost(t *testing.T) {
	cfg := demo(t)
	cfg.Worker.Role = settings.RoleGPU
	cfg.Worker.ScratchDir = t.TempDir()
	got, err := Worker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := hostinfo.MemoryLimit(); int64(got.Worker.MaxMemory) != want {
		t.Errorf("worker.max-memory unset: %d, want the host's %d", got.Worker.MaxMemory, want)
	}
	cfg.Worker.MaxMemory = 64 << 30
	if got, err := Worker(cfg); err != nil || got.Worker.MaxMemory != 64<<30 {
		t.Errorf("worker.max-memory 64GiB: %d (%v)", got.Worker.MaxMemory, err)
	}
}
