package dataset

import (
	"io"
	"os"
	"path/filepath"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/shards"
)

// splitWriter writes a split's rows into its parquet shards in the folder
// data, data/<split>-NNNNN-of-MMMMM.parquet cut by plan from package shards:
// a shard is started at its first row and completed at its last, so the
// writer holds one shard's row group at a time, and a tee's upload of a
// shard completes while the next one's rows are written.
type splitWriter struct {
	data, split string
	spec        bakeapi.Spec
	plan        shards.Plan
	tee         ShardTee
	next        int            // the shard to start next
	rows        int64          // written so far
	pw          *ParquetWriter // every shard's, Reset for the next
	open        *shardFile
}

// shardFile is the shard being written.
type shardFile struct {
	path string
	file *os.File
	tee  io.WriteCloser
	size shards.Counter
	left int64 // rows it still takes
}

// Write appends rows, each to its shard.
func (w *splitWriter) Write(rows ...Row) error {
	for i := range rows {
		if w.open == nil {
			if w.next == w.plan.Count {
				return invalidf("metadata n_mlps=%d but more rows were written; "+
					"set n_mlps to the row count", w.plan.Rows)
			}
			if err := w.start(); err != nil {
				return err
			}
		}
		s := w.open
		if err := w.pw.Write(rows[i]); err != nil {
			return err
		}
		w.rows++
		if s.left--; s.left == 0 {
			if err := w.finish(); err != nil {
				return err
			}
		}
	}
	return nil
}

// start creates the next shard's file, and hands it to the tee.
func (w *splitWriter) start() error {
	if err := os.MkdirAll(w.data, 0o755); err != nil {
		return err
	}
	s := &shardFile{
		path: filepath.Join(w.data, shardName(w.split, w.next, w.plan.Count)),
		left: w.plan.Len(w.next),
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	s.file, s.size.W = f, f
	w.open = s
	if w.tee != nil {
		if s.tee, err = w.tee(s.path); err != nil {
			return err
		}
		s.size.W = io.MultiWriter(f, s.tee)
	}
	w.next++
	if w.pw != nil {
		w.pw.Reset(&s.size)
		return nil
	}
	w.pw, err = NewParquetWriter(&s.size, w.spec)
	return err
}

// finish completes the open shard: its footer, the check of its size,
// the file synced and closed, and then its tee closed.
func (w *splitWriter) finish() error {
	s := w.open
	if err := w.pw.Close(); err != nil {
		return err
	}
	if err := shards.CheckSize(s.size.N, w.plan.Len(w.next-1)); err != nil {
		return invalidf("%s: %v", s.path, err)
	}
	if err := s.file.Sync(); err != nil {
		return err
	}
	if err := s.file.Close(); err != nil {
		return err
	}
	w.open = nil
	if s.tee != nil {
		return s.tee.Close()
	}
	return nil
}

// Close completes the last shard, the one shard of an empty split, once
// every row the plan has was written.
func (w *splitWriter) Close() error {
	if w.rows != w.plan.Rows {
		return invalidf("metadata n_mlps=%d but %d rows were written; "+
			"set n_mlps to the row count", w.plan.Rows, w.rows)
	}
	if w.next == 0 {
		if err := w.start(); err != nil {
			return err
		}
		return w.finish()
	}
	return nil
}

// abort closes the file of a shard that will not be finished, whose tee
// is left to its maker; the caller removes the files.
func (w *splitWriter) abort() {
	if w.open != nil {
		w.open.file.Close()
		w.open = nil
	}
}
