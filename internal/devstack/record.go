package devstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Record is where the servers started from one state directory listen. A
// start writes it to stack.json in the directory before it spawns a server,
// and every later command reads it: `dev status`, `dev down` and the next
// `dev up` address this stack's servers, and the starter and the worker
// default to its Temporal and S3 addresses through ClientDefaults, so that
// nothing run against this directory's stack reaches whatever else listens
// on the default ports. The pids are beside it, one file per server in run/.
type Record struct {
	TemporalPort     int `json:"temporal_port"`
	UIPort           int `json:"ui_port"`
	MinIOPort        int `json:"minio_port"`
	MinIOConsolePort int `json:"minio_console_port"`
}

// recordFile is the Record's file in the state directory.
const recordFile = "stack.json"

// maxRecordBytes bounds the read of a record: a few ports.
const maxRecordBytes = 4 << 10

// fixRecord is the fix-it of a state directory's damaged record.
const fixRecord = "remove it and run `whestbake dev up` again"

// ReadRecord reads the record in state directory dir; ok is false when
// there is none: no stack was ever started from dir. Only a regular file
// is read: the open does not wait for a writer, so a FIFO or a device at
// the record's path is refused at once instead of hanging every command
// that reads the record.
func ReadRecord(dir string) (r Record, ok bool, err error) {
	path := filepath.Join(dir, recordFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("devstack: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return r, false, fmt.Errorf("devstack: %w", err)
	} else if !st.Mode().IsRegular() {
		return r, false, fmt.Errorf("devstack: %s is not a regular file (mode %s), "+
			"so not a record of `whestbake dev up`: %s", path, st.Mode().Type(), fixRecord)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	switch {
	case err != nil:
		return r, false, fmt.Errorf("devstack: %w", err)
	case len(data) > maxRecordBytes:
		return r, false, fmt.Errorf("devstack: %s is over %d bytes, "+
			"not a record of `whestbake dev up`: %s", path, maxRecordBytes, fixRecord)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, false, fmt.Errorf("devstack: %s is not a record of `whestbake dev up` (%v): %s",
			path, err, fixRecord)
	}
	return r, true, nil
}

// record is o's ports as a Record.
func (o Options) record() Record {
	return Record{
		TemporalPort:     o.TemporalPort,
		UIPort:           o.UIPort,
		MinIOPort:        o.MinIOPort,
		MinIOConsolePort: o.MinIOConsolePort,
	}
}

// writeRecord records o's ports in its state directory.
func (o Options) writeRecord() error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("devstack: %w", err)
	}
	data, _ := json.MarshalIndent(o.record(), "", "  ")
	if err := writeFileAtomic(filepath.Join(o.Dir, recordFile), append(data, '\n')); err != nil {
		return fmt.Errorf("devstack: %w", err)
	}
	return nil
}

// ClientKeys are the config keys through which a client reaches a dev
// stack: ClientDefaults gives their values.
var ClientKeys = []string{"temporal.address", "s3.endpoint"}

// ClientDefaults are the values of ClientKeys that reach the stack
// recorded in state directory dir, for a config that gives none; nil when
// dir has no record.
func ClientDefaults(dir string) (map[string]string, error) {
	r, ok, err := ReadRecord(dir)
	if !ok || err != nil {
		return nil, err
	}
	return map[string]string{
		"temporal.address": addr(r.TemporalPort),
		"s3.endpoint":      addr(r.MinIOPort),
	}, nil
}

// WebUI is the Web UI of the stack recorded in dir if temporalAddr is that
// stack's frontend, else "": the UI of a Temporal server is not known from
// its address alone.
func WebUI(dir, temporalAddr string) string {
	r, ok, err := ReadRecord(dir)
	if !ok || err != nil || addr(r.TemporalPort) != temporalAddr {
		return ""
	}
	return "http://" + addr(r.UIPort)
}
