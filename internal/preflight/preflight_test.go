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

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// load reads yaml as a config file, with no WHESTBAKE_* variable of the
// developer's in the way.
func load(t *testing.T, yaml string) settings.Config {
	t.Helper()
	for _, key := range settings.Keys() {
		t.Setenv(settings.EnvName(key), "")
		os.Unsetenv(settings.EnvName(key))
	}
	t.Setenv(dataset.SaltEnv, "")
	cfg, err := settings.Load(writeFile(t, t.TempDir(), "c.yaml", yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// What only the files and the host can say fails the starter's preflight,
// named by its key, while the validator alone accepts it (it reads no
// file).
func TestBakeReadsTheFilesTheConfigNames(t *testing.T) {
	dir := t.TempDir()
	dup := writeFile(t, dir, "dup.json", "[5, 6, 5, 7]")
	short := writeFile(t, dir, "short.json", "[5, 6]")
	notJSON := writeFile(t, dir, "bad.json", "5, 6, 7, 8")
	for _, c := range []struct {
		name, edit, want string
	}{
		{"shape above the host's memory", "width: 8\n  depth: 2|width: 16384\n  depth: 1024",
			"bake.width and bake.depth: a 16384×1024 MLP needs about"},
		{"missing seeds file", "seed: 1|seeds-file: nope.json", "bake.splits[0].seeds-file cannot be read"},
		{"duplicate seeds", "seed: 1|seeds-file: " + dup, "contains duplicate at indices [0, 2]: both = 5"},
		{"short seeds file", "seed: 1|seeds-file: " + short, "has 2 seeds, expected n-mlps = 4"},
		{"seeds file not JSON", "seed: 1|seeds-file: " + notJSON, "extra data after the JSON array"},
		{"missing S3 CA", "s3:|s3:\n  ca-file: absent-ca.pem", "s3.ca-file cannot be read"},
		{"missing Temporal CA", "s3:|temporal: {tls: {ca-file: absent-ca.pem}}\ns3:", "temporal.tls.ca-file cannot be read"},
		{"TLS key without cert", "s3:|temporal: {tls: {key-file: k.pem}}\ns3:",
			"temporal.tls.cert-file is empty but temporal.tls.key-file is set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(c.edit, "|")
			if !strings.Contains(base, old) {
				t.Fatalf("edit %q does not apply", old)
			}
			cfg := load(t, strings.Replace(base, old, repl, 1))
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
	cfg := load(t, strings.Replace(base, "seed: 1", "seeds-file: nope.json", 1))
	cfg.Bake.Width, cfg.S3.CAFile = 0, filepath.Join(t.TempDir(), "absent-ca.pem")
	_, err := Bake(cfg)
	var ce *settings.Error
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("want 3 problems in one settings.Error, got %v", err)
	}
	for _, want := range []string{"bake.width is missing or 0", "s3.ca-file cannot be read", "bake.splits[0].seeds-file cannot be read"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if in, err := Bake(load(t, base)); err != nil || in.BakeID != "t-1" {
		t.Errorf("valid config: input %+v, %v", in, err)
	}
}

// The read-only verbs check only what they connect to: the Temporal verbs
// its TLS files, the S3 verbs the store's CA.
func TestTemporalAndStoreReadTheirOwnFiles(t *testing.T) {
	cfg := load(t, base)
	absent := filepath.Join(t.TempDir(), "absent.pem")
	cfg.Temporal.TLS.CAFile = absent
	if err := Temporal(cfg); err == nil || !strings.Contains(err.Error(), "temporal.tls.ca-file cannot be read") {
		t.Errorf("Temporal with a missing CA file: %v", err)
	}
	if err := Store(cfg); err != nil {
		t.Errorf("Store read a Temporal file: %v", err)
	}
	cfg.Temporal.TLS.CAFile, cfg.S3.CAFile = "", absent
	if err := Store(cfg); err == nil || !strings.Contains(err.Error(), "s3.ca-file cannot be read") {
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
	file := writeFile(t, dir, "file", "x")
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
		{"missing", filepath.Join(dir, "nope"), "",
			`worker.scratch-dir "` + filepath.Join(dir, "nope") + `" does not exist: point worker.scratch-dir at`},
		{"a file", file, "", `worker.scratch-dir "` + file + `" is not a directory`},
		{"not writable", readOnly, "", `worker.scratch-dir "` + readOnly + `" is not writable by this worker`},
		{"unset: TMPDIR, checked the same", "", filepath.Join(dir, "gone"),
			`worker.scratch-dir is unset, so the system's temporary directory "` + filepath.Join(dir, "gone") +
				`" (TMPDIR) is used, and it does not exist`},
		{"unset: a good TMPDIR", "", dir, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := load(t, base)
			if c.tmpdir != "" {
				t.Setenv("TMPDIR", c.tmpdir)
			}
			cfg.Worker.Role, cfg.Worker.Device, cfg.Worker.ScratchDir = settings.RoleGPU, "cpu", c.scratch
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
	cfg := load(t, base)
	cfg.Worker.ScratchDir = dir
	cfg.Release.Hub.Repo = "alice/gt"
	cfg.Release.Hub.TokenFile = writeFile(t, dir, "hf-token", "hf_settings_token\n")
	cfg.Worker.Role = settings.RoleControl
	if _, err := Worker(cfg); err != nil {
		t.Errorf("control worker with a token file: %v", err)
	}
	cfg.Release.Hub.TokenFile = filepath.Join(dir, "missing")
	if err := cfg.ValidateWorker(); err != nil {
		t.Fatalf("the validator read the token file: %v", err)
	}
	if _, err := Worker(cfg); err == nil || !strings.Contains(err.Error(), "release.hub.token-file") {
		t.Errorf("missing token file: %v", err)
	}
	cfg.Worker.Role = settings.RoleGPU
	if _, err := Worker(cfg); err != nil {
		t.Errorf("a GPU worker read the token file: %v", err)
	}
}

// worker.max-memory left unset is the host's limit; a value given stands.
func TestWorkerMaxMemoryDefaultsToTheHost(t *testing.T) {
	cfg := load(t, base)
	cfg.Worker.Role, cfg.Worker.ScratchDir = settings.RoleGPU, t.TempDir()
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
