package prepared

import (
	"errors"
	"fmt"
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
// save_to_disk writes for splits, '/'-separated and relative to the
// dataset: other files and folders, and any entry that is not a plain
// folder or file, a symlink included. A prepared/ that is itself no folder
// is foreign whole. A split's folder may hold its two JSON files and
// shards of any count that IsShardName takes, whoever wrote them: those are what
// prepare-arrow replaces, and what a check reads.
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
			if !IsSplitFile(f.Name()) || !f.Type().IsRegular() {
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
	// Rows is the split's row count, which fixes the shards the writer cuts
	// by package shards; a check reads the shards state.json lists instead.
	Rows int64
}

// SplitCheck checks one split's save_to_disk folder against its parquet
// rows as datasets.load_from_disk reads the folder, in
// datasets/arrow_dataset.py Dataset.load_from_disk, whoever wrote it:
// state.json, dataset_info.json and exactly the shards state.json lists
// when OpenSplitCheck opens it, then the shards' rows, in order, one
// parquet row at a time with Row, and at the end, with Finish, that no row
// is left. Each shard is read as an Arrow IPC stream whose every length
// and offset is checked against the file before it is used, a row's slice
// of each buffer at a time, so memory stays at a row however many rows a
// record batch holds. A failure is a *schema.InvalidDatasetError that
// names the file, the shard, the row and the repair.
type SplitCheck struct {
	split  Split
	layout []node
	shards []string // the files state.json lists, in order
	cur    *shard   // the shard being read, shards[opened-1]
	opened int
	rows   int64 // compared so far
}

// OpenSplitCheck checks s's folder, state.json and dataset_info.json, and
// opens its first shard, whose schema it checks.
func OpenSplitCheck(s Split) (*SplitCheck, error) {
	if err := schema.CheckShape(s.Width, s.Depth); err != nil {
		return nil, err
	}
	c := &SplitCheck{split: s, layout: newLayout(s.Width, s.Depth)}
	if err := c.checkFolders(); err != nil {
		return nil, err
	}
	shards, err := c.checkState()
	if err != nil {
		return nil, err
	}
	if err := c.checkInfo(); err != nil {
		return nil, err
	}
	if err := c.checkEntries(shards); err != nil {
		return nil, err
	}
	c.shards = shards
	if err := c.openNext(); err != nil {
		return nil, err
	}
	return c, nil
}

// path is file's path in the split's folder.
func (c *SplitCheck) path(file string) string {
	return filepath.Join(c.split.DatasetDir, Dir, c.split.Name, file)
}

// repairf is the refusal of a file of the split's folder.
func (c *SplitCheck) repairf(file, format string, args ...any) error {
	return c.refuse(c.path(file), format, args...)
}

// refuse is the refusal of what lies at path: it names it, and
// prepare-arrow as the repair.
func (c *SplitCheck) refuse(path, format string, args ...any) error {
	return schema.Errorf("%s: %s; `whestbake dataset prepare-arrow %s` "+
		"rebuilds the prepared tree from the parquet files",
		path, fmt.Sprintf(format, args...), c.split.DatasetDir)
}

// parquet names the split's parquet files in a refusal.
func (c *SplitCheck) parquet() string {
	return fmt.Sprintf("data/%s-*.parquet", c.split.Name)
}

// checkFolders refuses a prepared/ or split folder that is no folder: a
// symlink would have the loader read another tree than the one listed.
func (c *SplitCheck) checkFolders() error {
	for _, p := range []string{
		filepath.Join(c.split.DatasetDir, Dir),
		filepath.Dir(c.path(StateFile)),
	} {
		st, err := os.Lstat(p)
		if err != nil {
			return c.refuse(p, "cannot be read (%v)", errors.Unwrap(err))
		}
		if !st.IsDir() {
			return c.refuse(p, "is not a folder but a %s", st.Mode().Type())
		}
	}
	return nil
}

// checkEntries checks that the split's folder holds state.json,
// dataset_info.json and the shards, each a plain file, and nothing else:
// load_from_disk reads what state.json lists, and whatever else lies there
// is no part of the tree.
func (c *SplitCheck) checkEntries(shards []string) error {
	found := map[string]bool{StateFile: false, InfoFile: false}
	for _, s := range shards {
		found[s] = false
	}
	var bad error
	err := eachEntry(filepath.Dir(c.path(StateFile)), func(e fs.DirEntry) bool {
		if _, listed := found[e.Name()]; !listed {
			bad = c.repairf(e.Name(), "is not part of the split's save_to_disk folder, "+
				"which holds state.json, dataset_info.json and the %d shards state.json lists",
				len(shards))
		} else if !e.Type().IsRegular() {
			bad = c.repairf(e.Name(), "is not a plain file but a %s", e.Type())
		}
		found[e.Name()] = true
		return bad == nil
	})
	if err != nil || bad != nil {
		return errors.Join(err, bad)
	}
	for _, s := range shards {
		if !found[s] {
			return c.repairf(s, "is missing: state.json lists it as a shard of the split")
		}
	}
	return nil
}

// openNext closes the shard read so far and opens the next one.
func (c *SplitCheck) openNext() error {
	c.Close()
	name := c.shards[c.opened]
	s, err := openShard(c.path(name), c.split.Width, c.split.Depth, c.layout)
	if err != nil {
		return c.shardErr(name, err)
	}
	c.cur = s
	c.opened++
	return nil
}

// shardErr is the refusal of shard name for err, which says what is wrong
// with its stream; the shard's place among the split's is named when it
// has others.
func (c *SplitCheck) shardErr(name string, err error) error {
	if len(c.shards) > 1 {
		return c.repairf(name, "shard %d of %d: %v", slices.Index(c.shards, name), len(c.shards), err)
	}
	return c.repairf(name, "%v", err)
}

// Row compares the next row of the shards with r, the split's next
// parquet row.
func (c *SplitCheck) Row(r *schema.Row) error {
	if err := r.Check(c.split.Width, c.split.Depth); err != nil {
		return err
	}
	if err := c.toRow(); err != nil {
		return err
	}
	s := c.cur
	if err := s.compareRow(r); err != nil {
		return c.shardErr(s.name, fmt.Errorf("row %d of split %s (row %d of record batch %d "+
			"of this file) differs from the rows of %s: %w",
			c.rows, c.split.Name, s.b.next, s.b.index, c.parquet(), err))
	}
	s.b.next++
	c.rows++
	return nil
}

// toRow moves to a record batch with a row left to compare, through the
// shards in state.json's order.
func (c *SplitCheck) toRow() error {
	for c.cur.b.next == c.cur.b.rows {
		end, err := c.cur.next()
		if err != nil {
			return c.shardErr(c.cur.name, err)
		}
		if !end {
			continue
		}
		if c.opened == len(c.shards) {
			return c.shardErr(c.cur.name, fmt.Errorf("ends the split's rows after %d, "+
				"where %s holds more: the prepared tree lacks rows", c.rows, c.parquet()))
		}
		if err := c.openNext(); err != nil {
			return err
		}
	}
	return nil
}

// Finish checks that the shards hold no row after the parquet's last and
// end as IPC streams do.
func (c *SplitCheck) Finish() error {
	for {
		if left := c.cur.b.rows - c.cur.b.next; left > 0 {
			return c.shardErr(c.cur.name, fmt.Errorf("holds more rows than the %d of %s: "+
				"record batch %d has %d more", c.rows, c.parquet(), c.cur.b.index, left))
		}
		end, err := c.cur.next()
		switch {
		case err != nil:
			return c.shardErr(c.cur.name, err)
		case !end:
			continue
		case c.opened == len(c.shards):
			return nil
		}
		if err := c.openNext(); err != nil {
			return err
		}
	}
}

// Close releases the shard being read.
func (c *SplitCheck) Close() {
	if c.cur != nil {
		c.cur.f.Close()
		c.cur = nil
	}
}
