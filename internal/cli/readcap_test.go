package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sparseFile is a regular file of size bytes that takes no disk.
func sparseFile(t *testing.T, path string, size int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every file the CLI reads from a path the user gives has a cap: a config
// file (--config-file, which every verb reads, and config migrate's FILE)
// and a Hub token file. /dev/zero, which never ends, and a 100 MB file
// fail at once with the cap in the message, and cost no more memory than
// the cap.
func TestFilesTheUserNamesAreReadUnderACap(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	big := sparseFile(t, filepath.Join(dir, "big.yaml"), 100<<20)
	fixture := filepath.Join("..", "..", "testdata", "whestbench-fixtures",
		"single_split_v3_protocol")
	for _, file := range []string{"/dev/zero", big} {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"dataset", "info", fixture, "--config-file", file},
				"config file " + file + ": larger than 1 MiB"},
			{[]string{"config", "migrate", file}, "config file " + file + ": larger than 1 MiB"},
			{[]string{"dataset", "info", "hf://alice/gt",
				"--endpoint", "http://127.0.0.1:1", "--token-file", file},
				"hub token file " + file + ": larger than 64 KiB"},
			{[]string{"dataset", "upload", fixture, "--repo", "alice/gt",
				"--endpoint", "http://127.0.0.1:1", "--token-file", file},
				"hub token file " + file + ": larger than 64 KiB"},
		} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code, _, errs := run(t, c.args...)
			runtime.ReadMemStats(&after)
			if code == 0 || !strings.Contains(errs, c.want) {
				t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Errorf("%v: allocated %d MiB reading a file capped at 1 MiB", c.args, grew>>20)
			}
		}
	}
	code, _, errs := run(t, "dataset", "info", fixture, "--config-file", "/nonexistent/x.yaml")
	if code == 0 || !strings.Contains(errs, "no such file") {
		t.Errorf("a missing config file: exit %d %q", code, errs)
	}
}
