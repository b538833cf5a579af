package devstack_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/devstack"
)

// The ports a start recorded are every later command's, unless it names
// others; the clients' defaults and the Web UI come from the same record.
func TestRecordGivesThePorts(t *testing.T) {
	opts := fakeOptions(t, "exec sleep 60")
	dir := opts.Dir
	if _, ok, err := devstack.ReadRecord(dir); ok || err != nil {
		t.Fatalf("a fresh directory has a record (%v)", err)
	}
	if d, err := devstack.ClientDefaults(dir); d != nil || err != nil {
		t.Errorf("no record, yet client defaults %v (%v)", d, err)
	}
	// The fake server never gets healthy, but its start records the ports.
	opts.StartTimeout = 200 * time.Millisecond
	if _, err := devstack.Start(t.Context(), opts, devstack.MinIO); err == nil {
		t.Fatal("the fake server passed for healthy")
	}
	rec, ok, err := devstack.ReadRecord(dir)
	if !ok || err != nil ||
		rec.MinIOPort != opts.MinIOPort ||
		rec.TemporalPort != opts.TemporalPort ||
		rec.UIPort != opts.UIPort {
		t.Fatalf("record %+v (%v, %v), want the ports of %v", rec, ok, err, opts)
	}
	resolved, err := devstack.Options{Dir: dir, BinDir: opts.BinDir}.Resolved()
	if err != nil ||
		resolved.MinIOPort != opts.MinIOPort ||
		resolved.MinIOConsolePort != opts.MinIOConsolePort {
		t.Errorf("options without ports resolve to %v (%v), want the recorded ones", resolved, err)
	}
	resolved, _ = devstack.Options{Dir: dir, BinDir: opts.BinDir, MinIOPort: 1234}.Resolved()
	if resolved.MinIOPort != 1234 || resolved.TemporalPort != opts.TemporalPort {
		t.Errorf("a port given wins over the record, the others come from it: %v", resolved)
	}
	d, err := devstack.ClientDefaults(dir)
	if err != nil ||
		d["temporal.address"] != opts.TemporalAddr() ||
		d["s3.endpoint"] != opts.S3Config().Endpoint {
		t.Errorf("client defaults %v (%v)", d, err)
	}
	if ui := devstack.WebUI(dir, opts.TemporalAddr()); ui != opts.UIURL() {
		t.Errorf("Web UI of the recorded frontend: %q, want %q", ui, opts.UIURL())
	}
	if ui := devstack.WebUI(dir, "frontend.example:7233"); ui != "" {
		t.Errorf("Web UI of another frontend: %q, want none", ui)
	}
	// A damaged record is refused with its path, not read as ports.
	damaged := filepath.Join(dir, "stack.json")
	if err := os.WriteFile(damaged, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = devstack.ClientDefaults(dir)
	if err == nil || !strings.Contains(err.Error(), "stack.json is not a record") {
		t.Errorf("damaged record: %v", err)
	}
}

// A FIFO at the record's path (or a device) is refused at once, naming the
// path: opening it for reading would wait for a writer forever, and every
// command that reads the record would hang.
func TestRecordIsARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "stack.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := devstack.ClientDefaults(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
			t.Errorf("a FIFO as the record: %v, want a refusal naming it", err)
		}
	case <-time.After(10 * time.Second):
		// Let the blocked read end with the test.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("reading a FIFO as the record hangs")
	}
}
