package dataset

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
	"strings"
)

// The prepared tree is part of a dataset's integrity: whestbench's loader
// opens prepared/<split>/ with datasets.load_from_disk before it looks at the
// parquet files, and falls back to them silently on any error
// (dataset.py _try_load_prepared_split). A tree that holds other rows than
// the parquet files would be loaded instead of them without a word, so
// every reader that vouches for a dataset (inspect, verify, upload,
// download, the Push and HubPush activities) checks it: each split that
// metadata.json's prepared_splits lists has the path, state.json,
// dataset_info.json and Arrow stream that prepare-arrow writes for the
// split's parquet rows, byte for byte, and prepared/ holds nothing else.
// The stream is compared as it is re-encoded from the rows, a row at a
// time, so memory stays at a row however large the split.

// CheckPrepared opens the complete dataset in dir and checks its rows and
// its prepared tree (ScanPrepared). A directory with neither a prepared/
// folder nor prepared_splits in its metadata.json has no tree and is not
// opened: whatever else is wrong with it is for Open to say.
func CheckPrepared(dir string) error {
	_, err := os.Lstat(filepath.Join(dir, PreparedDir))
	hasFolder := !errors.Is(err, fs.ErrNotExist)
	md, mdErr := ReadMetadata(dir)
	if !hasFolder && (mdErr != nil || !md.Has("prepared_splits")) {
		return nil
	}
	d, err := Open(dir, false)
	if err != nil {
		return err
	}
	return d.ScanPrepared(nil)
}

// ScanPrepared is Scan that also checks the prepared tree against the rows
// as they stream by, in the same pass: the paths metadata.json's
// prepared_splits gives, that prepared/ holds each listed split's three
// files and nothing else (no symlink, no other file or folder),
// dataset_info.json and state.json as prepare-arrow writes them for the
// split, and the Arrow stream's rows equal to the parquet's, value for
// value. A failure is an *InvalidDatasetError that names the file and the
// repair.
func (d *Dir) ScanPrepared(visit func(*SplitData, Row) error) error {
	pc, err := d.openPreparedCheck()
	if err != nil {
		return err
	}
	defer pc.close()
	err = d.Scan(func(s *SplitData, r Row) error {
		if err := pc.row(s, r); err != nil {
			return err
		}
		if visit == nil {
			return nil
		}
		return visit(s, r)
	})
	if err != nil {
		return err
	}
	return pc.finish()
}

// preparedCheck is a check of d's prepared tree in progress: the files are
// checked when it opens, each stream as the rows go by, and each state.json
// at the end, once its stream's SHA-256 is known.
type preparedCheck struct {
	d       *Dir
	streams map[string]*streamCheck // by split, the splits prepared_splits lists
	order   []string                // their names, in metadata order
}

// openPreparedCheck checks prepared_splits and what prepared/ holds, and
// opens the listed splits' streams, whose schema it checks.
func (d *Dir) openPreparedCheck() (*preparedCheck, error) {
	listed, err := d.preparedSplitNames()
	if err != nil {
		return nil, err
	}
	foreign, err := foreignPrepared(d.Path, listed)
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		return nil, invalidf("%s holds %q, which its prepared tree does not have (metadata.json's "+
			"prepared_splits lists %q): whestbench's loader would read what it finds there; move them "+
			"out of the dataset (`whestbake dataset prepare-arrow` refuses to delete what it did not write)",
			filepath.Join(d.Path, PreparedDir), foreign, listed)
	}
	pc := &preparedCheck{d: d, streams: map[string]*streamCheck{}}
	for i := range d.Splits {
		sd := &d.Splits[i]
		if !slices.Contains(listed, sd.Name) {
			continue
		}
		err := pc.checkInfo(sd)
		var sc *streamCheck
		if err == nil {
			sc, err = pc.openStream(sd)
		}
		if err != nil {
			pc.close()
			return nil, err
		}
		pc.streams[sd.Name] = sc
		pc.order = append(pc.order, sd.Name)
	}
	return pc, nil
}

// preparedSplitNames is the splits metadata.json's prepared_splits lists,
// each entry checked to be the one prepare-arrow writes: a path outside
// the dataset is refused before anything is read there.
func (d *Dir) preparedSplitNames() ([]string, error) {
	v, ok := d.Meta.Get("prepared_splits")
	if !ok {
		return nil, nil
	}
	mdPath := filepath.Join(d.Path, MetadataFile)
	if !d.Info.MultiSplit {
		return nil, invalidf("%s: a single-split dataset has no prepared tree (whestbench reads prepared_splits "+
			"of multi-split datasets only), yet it lists prepared_splits: remove the key", mdPath)
	}
	// Validate has checked the block's shape: an object of objects with a
	// string path, naming splits of the dataset.
	block := v.(*Object)
	want := preparedSplits(block.Keys())
	for _, s := range block.Keys() {
		entry, _ := block.GetObject(s)
		w, _ := want.GetObject(s)
		if jsonEqual(entry, w) {
			continue
		}
		if p, _ := entry.GetString("path"); !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, `\`) {
			return nil, invalidf("%s: prepared_splits[%q].path is %q, outside the dataset: whestbench's loader "+
				"would read a split from there; `whestbake dataset prepare-arrow %s` rewrites it as %s",
				mdPath, s, p, d.Path, PreparedDir+"/"+s)
		}
		return nil, invalidf("%s: prepared_splits[%q] is %s, not %s as prepare-arrow writes it: "+
			"`whestbake dataset prepare-arrow %s` rewrites it", mdPath, s, compactJSON(entry), compactJSON(w), d.Path)
	}
	return block.Keys(), nil
}

// maxForeignListed bounds the foreign names a refusal lists and the
// entries read to find them: a folder of a million files costs no more
// than a few batches.
const maxForeignListed = 8

// foreignPrepared lists what dir's prepared/ folder holds besides the
// files prepare-arrow writes for splits ('/'-separated, relative to the
// dataset): other files and folders, and any entry that is not a plain
// folder or file, a symlink included. A prepared/ that is itself no folder
// is foreign whole.
func foreignPrepared(dir string, splits []string) ([]string, error) {
	root := filepath.Join(dir, PreparedDir)
	st, err := os.Lstat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("dataset: %w", err)
	case !st.IsDir():
		return []string{PreparedDir}, nil
	}
	var foreign []string
	err = eachEntry(root, func(e fs.DirEntry) bool {
		rel := PreparedDir + "/" + e.Name()
		if !slices.Contains(splits, e.Name()) || !e.IsDir() {
			foreign = append(foreign, rel)
			return len(foreign) < maxForeignListed
		}
		err := eachEntry(filepath.Join(root, e.Name()), func(f fs.DirEntry) bool {
			if !slices.Contains(preparedFiles, f.Name()) && f.Name() != preparedArrowFile || !f.Type().IsRegular() {
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

// repairf is the refusal of a file prepare-arrow writes: it names the
// file, and prepare-arrow as the repair.
func (pc *preparedCheck) repairf(split, file, format string, args ...any) error {
	return invalidf("%s: %s; `whestbake dataset prepare-arrow %s` rebuilds the prepared tree from the parquet files",
		filepath.Join(pc.d.Path, PreparedDir, split, file), fmt.Sprintf(format, args...), pc.d.Path)
}

// checkInfo compares the split's dataset_info.json with prepare-arrow's.
func (pc *preparedCheck) checkInfo(sd *SplitData) error {
	want, err := preparedInfoJSON(sd.Width, sd.Depth)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("of width %d and depth %d", sd.Width, sd.Depth)
	return pc.checkJSON(sd.Name, preparedInfoFile, want, what)
}

// checkJSON compares file of split's folder with want, reading no more of
// it than want's length and a byte.
func (pc *preparedCheck) checkJSON(split, file string, want []byte, what string) error {
	f, err := os.Open(filepath.Join(pc.d.Path, PreparedDir, split, file))
	if err != nil {
		return pc.repairf(split, file, "cannot be read (%v)", errors.Unwrap(err))
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(want))+1))
	if err != nil {
		return pc.repairf(split, file, "cannot be read (%v)", err)
	}
	if !bytes.Equal(got, want) {
		return pc.repairf(split, file, "is not what prepare-arrow writes for split %q %s", split, what)
	}
	return nil
}

// streamCheck compares one split's Arrow file with the stream that its
// parquet rows encode to: the encoder writes into the comparer, which reads
// as many bytes of the file and compares them.
type streamCheck struct {
	sd  *SplitData
	f   *os.File
	cmp *streamComparer
	sum hash.Hash // of the stream, for state.json's fingerprint
	enc *arrowEncoder
}

func (pc *preparedCheck) openStream(sd *SplitData) (*streamCheck, error) {
	f, err := os.Open(filepath.Join(pc.d.Path, PreparedDir, sd.Name, preparedArrowFile))
	if err != nil {
		return nil, pc.repairf(sd.Name, preparedArrowFile, "cannot be read (%v)", errors.Unwrap(err))
	}
	sc := &streamCheck{sd: sd, f: f, sum: sha256.New()}
	sc.cmp = &streamComparer{r: bufio.NewReaderSize(f, 1<<16), row: schemaPart}
	sc.enc, err = newArrowEncoder(io.MultiWriter(sc.cmp, sc.sum), sd.Width, sd.Depth)
	if err != nil {
		f.Close()
		return nil, pc.streamErr(sc)
	}
	return sc, nil
}

// row compares the next record batch of r's split, when it is prepared,
// with r.
func (pc *preparedCheck) row(s *SplitData, r Row) error {
	sc := pc.streams[s.Name]
	if sc == nil {
		return nil
	}
	sc.cmp.row++
	if err := sc.enc.write(&r); err != nil {
		if sc.cmp.err != nil {
			return pc.streamErr(sc)
		}
		return err
	}
	return nil
}

// finish checks that each stream ends where its rows do, then its
// state.json, whose fingerprint is the stream's SHA-256.
func (pc *preparedCheck) finish() error {
	for _, split := range pc.order {
		sc := pc.streams[split]
		sc.cmp.row = endPart
		err := sc.enc.end()
		if err == nil {
			err = sc.cmp.atEOF()
		}
		if err != nil {
			return pc.streamErr(sc)
		}
		state, err := preparedStateJSON(split, hex.EncodeToString(sc.sum.Sum(nil)))
		if err != nil {
			return err
		}
		if err := pc.checkJSON(split, preparedStateFile, state, "and its Arrow stream"); err != nil {
			return err
		}
	}
	return nil
}

// streamErr says where sc's file parted from the stream of the parquet
// rows.
func (pc *preparedCheck) streamErr(sc *streamCheck) error {
	c, sd := sc.cmp, sc.sd
	rows := fmt.Sprintf("the rows of %s/%s-*.parquet", dataDir, sd.Name)
	part := fmt.Sprintf("row %d", c.row)
	switch c.row {
	case schemaPart:
		part = fmt.Sprintf("its schema (the parquet files have width %d and depth %d)", sd.Width, sd.Depth)
	case endPart:
		part = fmt.Sprintf("its end-of-stream marker, where the %d rows of the parquet files end", sd.NMLPs)
	}
	switch {
	case errors.Is(c.err, errTruncated):
		return pc.repairf(sd.Name, preparedArrowFile, "ends at byte %d, in %s: it is truncated", c.off, part)
	case errors.Is(c.err, errTrailing):
		return pc.repairf(sd.Name, preparedArrowFile, "goes on after the end of the stream of %s (byte %d)", rows, c.off)
	case errors.Is(c.err, errDiffers):
		return pc.repairf(sd.Name, preparedArrowFile, "differs from the stream of %s at byte %d, in %s", rows, c.off, part)
	}
	return pc.repairf(sd.Name, preparedArrowFile, "cannot be read at byte %d (%v)", c.off, c.err)
}

func (pc *preparedCheck) close() {
	for _, sc := range pc.streams {
		sc.f.Close()
	}
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
// the next bytes of r, a fixed buffer at a time; its first difference
// sticks, at byte off. row is the row being compared, or schemaPart or
// endPart.
type streamComparer struct {
	r   *bufio.Reader
	off int64
	row int64
	err error
	buf [4 << 10]byte
}

func (c *streamComparer) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for done := 0; done < len(p); {
		n := min(len(p)-done, len(c.buf))
		got, err := io.ReadFull(c.r, c.buf[:n])
		if i := mismatch(c.buf[:got], p[done:done+got]); i < got {
			c.off += int64(i)
			c.err = errDiffers
			return done + i, c.err
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
	switch _, err := c.r.ReadByte(); {
	case err == nil:
		c.err = errTrailing
	case !errors.Is(err, io.EOF):
		c.err = err
	}
	return c.err
}
