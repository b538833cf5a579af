package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/prepared"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/staging"
)

// The prepared Arrow tree is whestbench's loader fast path: for each split
// of a multi-split dataset, prepared/<split>/ in the layout of the
// datasets library's Dataset.save_to_disk, as package prepared writes it, which
// whestbench's loader opens with datasets.load_from_disk in preference to
// the parquet files, falling back to them silently when it cannot.
const (
	PreparedDir    = prepared.Dir
	PreparedFormat = prepared.Format
	// The files of a split's prepared folder: its Arrow stream, and the two
	// JSON files save_to_disk writes beside it.
	PreparedArrowFile = prepared.ArrowFile
	PreparedInfoFile  = prepared.InfoFile
	PreparedStateFile = prepared.StateFile
	// preparedStagingPrefix names PrepareArrow's temporary folders in the
	// dataset directory.
	preparedStagingPrefix = ".prepared.tmp-"
)

// PreparedPaths are the files of d's prepared tree as prepare-arrow
// writes it for d's splits, '/'-separated and relative to the dataset
// directory: each split's Arrow shards and its two JSON files.
func (d *Dir) PreparedPaths() ([]string, error) { return prepared.Paths(d.preparedSplits()) }

// preparedSplits are d's splits as the prepared tree's writer and check
// take them: name, shape and row count, which decide the shards.
func (d *Dir) preparedSplits() []prepared.Split {
	out := make([]prepared.Split, len(d.Splits))
	for i, sd := range d.Splits {
		out[i] = prepared.Split{
			DatasetDir: d.Path,
			Name:       sd.Name,
			Width:      sd.Width,
			Depth:      sd.Depth,
			Rows:       d.Info.Splits[i].NMLPs,
		}
	}
	return out
}

// writePrepared streams every split of d, opened and complete, into
// root/<split>/: the Arrow IPC stream, dataset_info.json and state.json.
// Scan checks the rows as it goes and holds one at a time, and each row is
// one record batch, so memory is a row however large the split.
func writePrepared(d *Dir, root string) error {
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}
	var row Row // shared by every split, as in Scan
	for i, s := range d.preparedSplits() {
		sd := &d.Splits[i]
		w, err := prepared.NewSplitWriter(filepath.Join(root, s.Name), s.Name, s.Width, s.Depth,
			s.Rows, nil)
		if err != nil {
			return err
		}
		write := func(_ *SplitData, r Row) error { return w.Write(&r) }
		err = d.scanSplit(sd, &d.Info.Splits[i], &row, write)
		if err != nil {
			w.Abort() // the caller removes the half-written tree
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}

// PrepareArrow builds or rebuilds the prepared Arrow tree of the complete
// multi-split dataset in dir, as whestbench's `dataset prepare-arrow` does, and
// records it as prepared_splits in metadata.json. The new tree is built in
// a temporary folder in dir and takes prepared/'s place at once, so a
// reader sees the old tree or the new one; metadata.json is replaced by a
// rename after that. Staging folders left by an interrupted run are
// removed first. A prepared/ folder that holds anything besides the files
// save_to_disk writes in the dataset's splits' folders, whoever wrote
// them, is refused, not replaced.
func PrepareArrow(dir string) (err error) {
	d, err := Open(dir, false)
	if err != nil {
		return err
	}
	if err := d.Info.CheckLoadable(); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if !d.Info.MultiSplit {
		return invalidf("%s: prepare-arrow is only meaningful for multi-split datasets "+
			"(no 'splits' block found in metadata.json); "+
			"combine the split with `whestbake dataset combine-splits` first",
			filepath.Join(dir, MetadataFile))
	}
	names := make([]string, len(d.Splits))
	for i, s := range d.Splits {
		names[i] = s.Name
	}
	// The new tree replaces prepared/ whole: refuse to delete what an
	// operator put there, as the report's CheckReportFolder refuses, and
	// replace only what save_to_disk writes.
	foreign, err := prepared.Foreign(dir, names)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return invalidf("%s holds %q, which prepare-arrow did not write: "+
			"the new tree replaces the folder whole and would delete them; "+
			"move them out of %s and run again",
			filepath.Join(dir, PreparedDir), foreign, PreparedDir+"/")
	}
	if err := staging.RemoveLeftovers(dir, preparedStagingPrefix); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, preparedStagingPrefix)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(tmp); err == nil && rmErr != nil {
			err = rmErr
		}
	}()
	staged := filepath.Join(tmp, PreparedDir)
	if err := writePrepared(d, staged); err != nil {
		return err
	}
	if err := staging.Swap(staged, filepath.Join(dir, PreparedDir)); err != nil {
		return fmt.Errorf("dataset: putting the prepared tree in place: %w", err)
	}
	d.Meta.Set("prepared_splits", prepared.SplitsBlock(names))
	data, err := encodeMetadata(d.Meta)
	if err != nil {
		return err
	}
	return staging.Replace(filepath.Join(dir, MetadataFile), data)
}

// The prepared tree is part of a dataset's integrity: whestbench's loader
// opens prepared/<split>/ with datasets.load_from_disk before it looks at the
// parquet files, and falls back to them silently on any error, in
// dataset.py _try_load_prepared_split. A tree that holds other rows than
// the parquet files would be loaded instead of them without a word, so
// every reader that vouches for a dataset checks it, whoever
// wrote it: each split that metadata.json's prepared_splits lists has the
// path prepare-arrow writes, and its folder is a save_to_disk folder that
// load_from_disk reads as the split's parquet rows, row for row, bit for
// bit, as prepared.SplitCheck checks; prepared/ holds nothing else. The
// readers are inspect, verify, upload, download, compare and the Push and
// HubPush activities. The shards are
// read as the rows stream by, a row's slice of each buffer at a time, so
// memory stays at a row however large the split and its record batches.
//
// prepare-arrow replaces a tree that holds only the files save_to_disk
// writes, state.json, dataset_info.json and data-NNNNN-of-MMMMM.arrow, as
// whestbench's and whestbake's do, and refuses any other file.

// CheckPrepared opens the complete dataset in dir and checks its rows and
// its prepared tree with ScanPrepared. A directory with neither a prepared/
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

// CheckFetched checks a dataset that arrived file by file from a source
// that may have left files out, such as a Hub repository's listing. With
// split "" the whole dataset must open, every split's shards a complete
// set and nothing stray, and its prepared tree must match its rows, as
// CheckPrepared checks; with a split, that split's shards must be a complete
// set. A missing shard is then an error naming it, not a dataset short of
// rows.
func CheckFetched(dir, split string) error {
	if split == "" {
		if _, err := Open(dir, false); err != nil {
			return err
		}
		return CheckPrepared(dir)
	}
	_, _, files, err := openDir(dir, false)
	if err != nil {
		return err
	}
	_, _, err = openShards(dir, split, files)
	return err
}

// ScanPrepared is Scan that also checks the prepared tree against the rows
// as they stream by, in the same pass: the paths metadata.json's
// prepared_splits gives, that prepared/ holds each listed split's
// save_to_disk files and nothing else, no symlink nor any other file or
// folder, and each split's folder as load_from_disk reads it, its rows
// equal to the parquet's bit for bit, as prepared.SplitCheck checks. A failure is
// an *InvalidDatasetError that names the file and the repair.
func (d *Dir) ScanPrepared(visit func(*SplitData, Row) error) error {
	pc, err := d.openPreparedCheck()
	if err != nil {
		return err
	}
	defer pc.close()
	err = d.Scan(func(s *SplitData, r Row) error {
		if c := pc.splits[s.Name]; c != nil {
			if err := c.Row(&r); err != nil {
				return err
			}
		}
		if visit == nil {
			return nil
		}
		return visit(s, r)
	})
	if err != nil {
		return err
	}
	for _, name := range pc.order {
		if err := pc.splits[name].Finish(); err != nil {
			return err
		}
	}
	return nil
}

// preparedCheck is a check of d's prepared tree in progress: one
// prepared.SplitCheck a split that prepared_splits lists.
type preparedCheck struct {
	splits map[string]*prepared.SplitCheck
	order  []string // their names, in metadata order
}

// openPreparedCheck checks prepared_splits and what prepared/ holds, and
// opens the listed splits' checks.
func (d *Dir) openPreparedCheck() (*preparedCheck, error) {
	listed, err := d.preparedSplitNames()
	if err != nil {
		return nil, err
	}
	var splits []prepared.Split
	for _, s := range d.preparedSplits() {
		if slices.Contains(listed, s.Name) {
			splits = append(splits, s)
		}
	}
	foreign, err := prepared.Foreign(d.Path, listed)
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		return nil, invalidf("%s holds %q, which its prepared tree does not have "+
			"(metadata.json's prepared_splits lists %q): "+
			"whestbench's loader would read what it finds there; "+
			"move them out of the dataset "+
			"(`whestbake dataset prepare-arrow` refuses to delete what it did not write)",
			filepath.Join(d.Path, PreparedDir), foreign, listed)
	}
	pc := &preparedCheck{splits: map[string]*prepared.SplitCheck{}}
	for _, s := range splits {
		c, err := prepared.OpenSplitCheck(s)
		if err != nil {
			pc.close()
			return nil, err
		}
		pc.splits[s.Name] = c
		pc.order = append(pc.order, s.Name)
	}
	return pc, nil
}

func (pc *preparedCheck) close() {
	for _, c := range pc.splits {
		c.Close()
	}
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
		return nil, invalidf("%s: a single-split dataset has no prepared tree "+
			"(whestbench reads prepared_splits of multi-split datasets only), "+
			"yet it lists prepared_splits: remove the key", mdPath)
	}
	// Validate has checked the block's shape: an object of objects with a
	// string path, naming splits of the dataset.
	block := v.(*Object)
	want := prepared.SplitsBlock(block.Keys())
	for _, s := range block.Keys() {
		entry, _ := block.GetObject(s)
		w, _ := want.GetObject(s)
		if pyjson.Equal(entry, w) {
			continue
		}
		p, _ := entry.GetString("path")
		if !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, `\`) {
			return nil, invalidf("%s: prepared_splits[%q].path is %q, outside the dataset: "+
				"whestbench's loader would read a split from there; "+
				"`whestbake dataset prepare-arrow %s` rewrites it as %s",
				mdPath, s, p, d.Path, PreparedDir+"/"+s)
		}
		return nil, invalidf("%s: prepared_splits[%q] is %s, not %s as prepare-arrow writes it: "+
			"`whestbake dataset prepare-arrow %s` rewrites it",
			mdPath, s, pyjson.Compact(entry), pyjson.Compact(w), d.Path)
	}
	return block.Keys(), nil
}

// PreparedWriter writes one split's prepared folder a row at a time, as
// prepared.SplitWriter: Write each row, then Close, or Abort.
type PreparedWriter = prepared.SplitWriter

// NewPreparedWriter starts the prepared folder of split, which has rows
// rows of width and depth, at root/prepared/<split>/, as Combine writes it
// in a dataset; tee, if not nil, is handed each of its Arrow shards as it
// is written, as a ShardTee. A bake's merge writes it beside the merged split.
func NewPreparedWriter(
	root, split string,
	width, depth int,
	rows int64,
	tee ShardTee,
) (*PreparedWriter, error) {
	if err := os.MkdirAll(filepath.Join(root, PreparedDir), 0o755); err != nil {
		return nil, err
	}
	return prepared.NewSplitWriter(filepath.Join(root, PreparedDir, split), split, width, depth,
		rows, tee)
}

// CheckPreparedSplit checks the prepared folder root/prepared/<split>/
// that NewPreparedWriter writes against the rows of the complete single-split
// dataset at dir, as CheckPrepared checks a dataset's: state.json,
// dataset_info.json, the shards row for row.
func CheckPreparedSplit(dir, root string) error {
	d, err := Open(dir, false)
	if err != nil {
		return err
	}
	s := d.preparedSplits()[0]
	s.DatasetDir = root
	c, err := prepared.OpenSplitCheck(s)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := d.Scan(func(_ *SplitData, r Row) error { return c.Row(&r) }); err != nil {
		return err
	}
	return c.Finish()
}
