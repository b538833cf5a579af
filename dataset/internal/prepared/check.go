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
func Foreign(dir string, splits []string) ([]string, error) {
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
	var foreign []string
	err = eachEntry(root, func(e fs.DirEntry) bool {
		rel := Dir + "/" + e.Name()
		if !slices.Contains(splits, e.Name()) || !e.IsDir() {
			foreign = append(foreign, rel)
			return len(foreign) < maxForeignListed
		}
		err := eachEntry(filepath.Join(root, e.Name()), func(f fs.DirEntry) bool {
			if !slices.Contains(splitFiles, f.Name()) || !f.Type().IsRegular() {
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

// Split is a split whose prepared folder is checked: the dataset
// directory that holds it, its name, and its parquet rows' shape.
type Split struct {
	DatasetDir   string
	Name         string
	Width, Depth int
}

// SplitCheck compares one split's folder with what prepare-arrow writes
// for its parquet rows: dataset_info.json when it opens, the Arrow stream
// as the rows go by (Row), and state.json at the end (Finish), once the
// stream's SHA-256 is known. The stream is compared as it is re-encoded
// from the rows: the encoder writes into the comparer, which reads as many
// bytes of the file and compares them, so memory stays at a row however
// large the split. A failure is a *schema.InvalidDatasetError that names
// the file and the repair.
type SplitCheck struct {
	split Split
	file  *os.File
	cmp   *streamComparer
	sum   hash.Hash // of the stream, for state.json's fingerprint
	enc   *arrowEncoder
	rows  int64 // compared so far
}

// OpenSplitCheck checks s's dataset_info.json and opens its Arrow stream,
// whose schema it checks.
func OpenSplitCheck(s Split) (*SplitCheck, error) {
	c := &SplitCheck{split: s}
	if err := c.checkInfo(); err != nil {
		return nil, err
	}
	f, err := os.Open(c.path(ArrowFile))
	if err != nil {
		return nil, c.repairf(ArrowFile, "cannot be read (%v)", errors.Unwrap(err))
	}
	c.file = f
	c.sum = sha256.New()
	c.cmp = &streamComparer{src: bufio.NewReaderSize(f, 1<<16), row: schemaPart}
	c.enc, err = newArrowEncoder(io.MultiWriter(c.cmp, c.sum), s.Width, s.Depth)
	if err != nil {
		f.Close()
		return nil, c.streamErr()
	}
	return c, nil
}

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

// Row compares the stream's next record batch with r.
func (c *SplitCheck) Row(r *schema.Row) error {
	c.cmp.row++
	c.rows++
	if err := c.enc.write(r); err != nil {
		if c.cmp.err != nil {
			return c.streamErr()
		}
		return err
	}
	return nil
}

// Finish checks that the stream ends where its rows do, then state.json,
// whose fingerprint is the stream's SHA-256.
func (c *SplitCheck) Finish() error {
	c.cmp.row = endPart
	err := c.enc.end()
	if err == nil {
		err = c.cmp.atEOF()
	}
	if err != nil {
		return c.streamErr()
	}
	state, err := stateJSON(c.split.Name, hex.EncodeToString(c.sum.Sum(nil)))
	if err != nil {
		return err
	}
	return c.checkJSON(StateFile, state, "and its Arrow stream")
}

// Close releases the Arrow file.
func (c *SplitCheck) Close() { c.file.Close() }

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
		part = fmt.Sprintf("its end-of-stream marker, where the %d rows of the parquet files end",
			c.rows)
	}
	switch {
	case errors.Is(cmp.err, errTruncated):
		return c.repairf(ArrowFile, "ends at byte %d, in %s: it is truncated", cmp.off, part)
	case errors.Is(cmp.err, errTrailing):
		return c.repairf(ArrowFile, "goes on after the end of the stream of %s (byte %d)",
			rows, cmp.off)
	case errors.Is(cmp.err, errDiffers):
		return c.repairf(ArrowFile, "differs from the stream of %s at byte %d, in %s",
			rows, cmp.off, part)
	}
	return c.repairf(ArrowFile, "cannot be read at byte %d (%v)", cmp.off, cmp.err)
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
