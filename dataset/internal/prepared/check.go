package prepared

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// maxForeignListed bounds the foreign names a refusal lists and the
// entries read to find them: a folder of a million files costs no more
// than a few batches.
const maxForeignListed = 8

// Foreign lists what dir's prepared/ folder holds besides the files
// prepare-arrow writes for splits ('/'-separated, relative to the
// dataset): other files and folders, and any entry that is not a plain
// folder or file, a symlink included. A prepared/ that is itself no folder
// is foreign whole.
func Foreign(dir string, splits []Split) ([]string, error) {
	root := filepath.Join(dir, Dir)
	st, err := os.Lstat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("dataset: %w", err)
	case !st.IsDir():
		return []string{Dir}, nil
	}
	files := map[string][]string{}
	for _, s := range splits {
		if files[s.Name], err = s.Files(); err != nil {
			return nil, err
		}
	}
	var foreign []string
	err = eachEntry(root, func(e fs.DirEntry) bool {
		rel := Dir + "/" + e.Name()
		files, ok := files[e.Name()]
		if !ok || !e.IsDir() {
			foreign = append(foreign, rel)
			return len(foreign) < maxForeignListed
		}
		err := eachEntry(filepath.Join(root, e.Name()), func(f fs.DirEntry) bool {
			if !slices.Contains(files, f.Name()) || !f.Type().IsRegular() {
				foreign = append(foreign, rel+"/"+f.Name())
			}
			return len(foreign) < maxForeignListed
		})
		if err != nil {
			foreign = append(foreign, rel)
		}
		return len(foreign) < maxForeignListed
	})
	return foreign, err
}

// eachEntry calls f on dir's entries, a batch at a time, until f returns
// false. The entries' types are lstat's: a symlink is a symlink.
func eachEntry(dir string, f func(fs.DirEntry) bool) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer d.Close()
	for {
		batch, err := d.ReadDir(64)
		for _, e := range batch {
			if !f(e) {
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
	}
}

// Split is a split whose prepared folder is written or checked: the
// dataset directory that holds it, its name, and its parquet rows' shape
// and count, which decide its shards.
type Split struct {
	DatasetDir   string
	Name         string
	Width, Depth int
	Rows         int64
}

// SplitCheck compares one split's folder with what prepare-arrow writes
// for its parquet rows: dataset_info.json when it opens, the Arrow shards
// as the rows go by (Row), and state.json at the end (Finish), once the
// shards' SHA-256 is known. Each shard is compared as it is re-encoded
// from the rows (shardStream, as the writer cuts them): the encoder writes
// into the comparer, which reads as many bytes of the file and compares
// them, so memory stays at a row however large the split. A failure is a
// *schema.InvalidDatasetError that names the file and the repair.
type SplitCheck struct {
	split  Split
	stream *shardStream
	shard  string // the open shard's file name
	file   *os.File
	cmp    *streamComparer
	sum    hash.Hash // of the shards, for state.json's fingerprint
	rows   int64     // compared so far
}

// OpenSplitCheck checks s's dataset_info.json and gets ready to compare
// its Arrow shards.
func OpenSplitCheck(s Split) (*SplitCheck, error) {
	c := &SplitCheck{split: s, sum: sha256.New()}
	if err := c.checkInfo(); err != nil {
		return nil, err
	}
	plan, err := s.plan()
	if err != nil {
		return nil, err
	}
	c.stream = newShardStream(plan, s.Width, s.Depth, c.openShard, c.shardDone)
	return c, nil
}

// openShard opens shard i for the comparer, which compares its schema
// first.
func (c *SplitCheck) openShard(i int) (io.Writer, error) {
	c.Close()
	c.shard = c.stream.name(i)
	f, err := os.Open(c.path(c.shard))
	if err != nil {
		return nil, c.repairf(c.shard, "cannot be read (%v)", errors.Unwrap(err))
	}
	c.file = f
	c.cmp = &streamComparer{src: bufio.NewReaderSize(f, 1<<16), row: schemaPart}
	return io.MultiWriter(c.cmp, c.sum), nil
}

// shardDone checks that the open shard ends where its stream did.
func (c *SplitCheck) shardDone(int) error { return c.cmp.atEOF() }

// path is file's path in the split's folder.
func (c *SplitCheck) path(file string) string {
	return filepath.Join(c.split.DatasetDir, Dir, c.split.Name, file)
}

// repairf is the refusal of a file prepare-arrow writes: it names the
// file, and prepare-arrow as the repair.
func (c *SplitCheck) repairf(file, format string, args ...any) error {
	return schema.Errorf("%s: %s; `whestbake dataset prepare-arrow %s` "+
		"rebuilds the prepared tree from the parquet files",
		c.path(file), fmt.Sprintf(format, args...), c.split.DatasetDir)
}

// checkInfo compares the split's dataset_info.json with prepare-arrow's.
func (c *SplitCheck) checkInfo() error {
	want, err := InfoJSON(c.split.Width, c.split.Depth)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("of width %d and depth %d", c.split.Width, c.split.Depth)
	return c.checkJSON(InfoFile, want, what)
}

// checkJSON compares file of the split's folder with want, reading no more
// of it than want's length and a byte.
func (c *SplitCheck) checkJSON(file string, want []byte, what string) error {
	f, err := os.Open(c.path(file))
	if err != nil {
		return c.repairf(file, "cannot be read (%v)", errors.Unwrap(err))
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(want))+1))
	if err != nil {
		return c.repairf(file, "cannot be read (%v)", err)
	}
	if !bytes.Equal(got, want) {
		return c.repairf(file, "is not what prepare-arrow writes for split %q %s",
			c.split.Name, what)
	}
	return nil
}

// Row compares the next record batch of its shard with r.
func (c *SplitCheck) Row(r *schema.Row) error {
	if c.stream.full() {
		c.cmp.row = endPart // the shard before r's ends first
	}
	err := c.stream.ready()
	if err == nil {
		c.cmp.row = c.rows
		c.rows++
		err = c.stream.write(r)
	}
	return c.failed(err)
}

// Finish checks that the last shard ends where its rows do, and that
// every shard came, then state.json, whose fingerprint is the shards'
// SHA-256.
func (c *SplitCheck) Finish() error {
	if c.stream.full() {
		c.cmp.row = endPart
	}
	if err := c.failed(c.stream.close()); err != nil {
		return err
	}
	state, err := stateJSON(c.split.Name, c.stream.names(), hex.EncodeToString(c.sum.Sum(nil)))
	if err != nil {
		return err
	}
	return c.checkJSON(StateFile, state, "and its Arrow shards")
}

// failed is err, said as where the shard parted from the stream of the
// parquet rows when the comparer found it so.
func (c *SplitCheck) failed(err error) error {
	if err != nil && c.cmp != nil && c.cmp.err != nil {
		return c.streamErr()
	}
	return err
}

// Close releases the open shard's file.
func (c *SplitCheck) Close() {
	if c.file != nil {
		c.file.Close()
		c.file = nil
	}
}

// streamErr says where the split's file parted from the stream of the
// parquet rows.
func (c *SplitCheck) streamErr() error {
	cmp := c.cmp
	s := c.split
	rows := fmt.Sprintf("the rows of data/%s-*.parquet", s.Name)
	part := fmt.Sprintf("row %d", cmp.row)
	switch cmp.row {
	case schemaPart:
		part = fmt.Sprintf("its schema (the parquet files have width %d and depth %d)",
			s.Width, s.Depth)
	case endPart:
		part = fmt.Sprintf("its end-of-stream marker, after the first %d rows of the parquet files",
			c.rows)
	}
	switch {
	case errors.Is(cmp.err, errTruncated):
		return c.repairf(c.shard, "ends at byte %d, in %s: it is truncated", cmp.off, part)
	case errors.Is(cmp.err, errTrailing):
		return c.repairf(c.shard, "goes on after the end of the stream of %s (byte %d)",
			rows, cmp.off)
	case errors.Is(cmp.err, errDiffers):
		return c.repairf(c.shard, "differs from the stream of %s at byte %d, in %s",
			rows, cmp.off, part)
	}
	return c.repairf(c.shard, "cannot be read at byte %d (%v)", cmp.off, cmp.err)
}

var (
	errDiffers   = errors.New("differs")
	errTruncated = errors.New("truncated")
	errTrailing  = errors.New("trailing bytes")
)

// What a streamComparer is comparing besides a row.
const (
	schemaPart = -1
	endPart    = -2
)

// streamComparer is an io.Writer that compares what is written to it with
// the next bytes of src, a fixed buffer at a time; its first difference
// sticks, at byte off. row is the row being compared, or schemaPart or
// endPart.
type streamComparer struct {
	src *bufio.Reader
	off int64
	row int64
	err error
	buf [64 << 10]byte
}

func (c *streamComparer) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for done := 0; done < len(p); {
		n := min(len(p)-done, len(c.buf))
		got, err := io.ReadFull(c.src, c.buf[:n])
		same := got
		if !bytes.Equal(c.buf[:got], p[done:done+got]) {
			same = 0
			for c.buf[same] == p[done+same] {
				same++
			}
		}
		if same < got {
			c.off += int64(same)
			c.err = errDiffers
			return done + same, c.err
		}
		c.off += int64(got)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			c.err = errTruncated
		case err != nil:
			c.err = err
		}
		if c.err != nil {
			return done + got, c.err
		}
		done += n
	}
	return len(p), nil
}

// atEOF is nil when the file ends where the stream did.
func (c *streamComparer) atEOF() error {
	switch _, err := c.src.ReadByte(); {
	case err == nil:
		c.err = errTrailing
	case !errors.Is(err, io.EOF):
		c.err = err
	}
	return c.err
}
