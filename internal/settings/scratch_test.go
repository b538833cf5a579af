package settings

import (
	"path/filepath"
	"testing"
)

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
