package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// worker.scratch-dir is checked when the worker starts: a directory this
// process can create and remove files in, or an error that names the key,
// the path and what is wrong with it.
func TestWorkerScratchDirIsCheckedAtStart(t *testing.T) {
	clearEnv(t)
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
		{"missing", filepath.Join(dir, "nope"), "", `worker.scratch-dir "` + filepath.Join(dir, "nope") + `" does not exist: point worker.scratch-dir at`},
		{"a file", file, "", `worker.scratch-dir "` + file + `" is not a directory`},
		{"not writable", readOnly, "", `worker.scratch-dir "` + readOnly + `" is not writable by this worker`},
		{"unset: TMPDIR, checked the same", "", filepath.Join(dir, "gone"),
			`worker.scratch-dir is unset, so the system's temporary directory "` + filepath.Join(dir, "gone") + `" (TMPDIR) is used, and it does not exist`},
		{"unset: a good TMPDIR", "", dir, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.tmpdir != "" {
				t.Setenv("TMPDIR", c.tmpdir)
			}
			cfg := Default()
			cfg.S3.AccessKey, cfg.S3.SecretKey = "u", testSecret
			cfg.Worker.Role, cfg.Worker.Device, cfg.Worker.ScratchDir = RoleGPU, "cpu", c.scratch
			err := cfg.ValidateWorker()
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

// A relative worker.scratch-dir in a config file is relative to the file,
// like the key files; one from the environment is the caller's own.
func TestWorkerScratchDirRelativeToTheConfigFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "c.yaml", "worker:\n  scratch-dir: scratch\n")
	cfg, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "scratch"); cfg.Worker.Scratch() != want {
		t.Errorf("scratch %q, want %q", cfg.Worker.Scratch(), want)
	}
	t.Setenv(EnvName("worker.scratch-dir"), "mine")
	if cfg, err = Load(file, nil); err != nil || cfg.Worker.Scratch() != "mine" {
		t.Errorf("from the environment: %q (%v), want mine", cfg.Worker.Scratch(), err)
	}
}
