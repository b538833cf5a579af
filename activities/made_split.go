package activities

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// splitSummary is what a merged split holds in place of its rows
// as summaryFile beside its metadata.json, so that CombineSplits combines
// the split without reading a row: the files of the bake's dataset that
// the merge wrote at their keys, by path in the dataset with sha256 and
// size: the parquet shards and the prepared folder; the statistics of the
// split's rows for the report, and whether the merge checked the prepared
// folder against the shards by the rule of preparedCheckRule.
type splitSummary struct {
	Files           []manifest.File `json:"files"`
	Stats           *report.Split   `json:"stats"`
	PreparedChecked string          `json:"prepared_checked"`
	Seal            seal.Seal       `json:"seal"`
}

// summaryFile is the splitSummary's file in a merged split.
const summaryFile = "summary.json"

// madeSplit is what a merge makes of its split for the bake's dataset as
// the rows go by: the parquet shards, through shardTee, and the prepared
// folder's Arrow shards, through row, go up to their keys in the dataset while they are
// written, each shard's upload completed as the shard is, and the
// report's statistics are gathered, so that when the last row is merged
// only the last parts are left to send.
type madeSplit struct {
	ctx      context.Context
	st       *store.Store
	split    string
	rows     int64  // the split's, which decide its shards
	root     string // the local prepared folder is root/prepared/<split>/
	dataset  string // the bake's dataset prefix
	uploads  []*store.Upload
	files    []manifest.File // the split's files in the dataset, as completed
	prepared *dataset.PreparedWriter
	stats    *report.Split
}

// newMadeSplit starts the made split of bakeID's split of rows MLPs, with
// its local files under root.
func (a *Activities) newMadeSplit(
	ctx context.Context,
	bakeID, split string,
	rows int64,
	root string,
) *madeSplit {
	return &madeSplit{
		ctx:     ctx,
		st:      a.Store,
		split:   split,
		rows:    rows,
		root:    root,
		dataset: keys.Bake(bakeID).Dataset(),
	}
}

// from makes the split from dir, a fetched slice that covers the whole
// split, and writes it again at out, where finish then finds it: its rows,
// checked, into the shards that a merge of them writes, the prepared folder
// and the statistics.
func (m *madeSplit) from(dir, out string) error {
	d, err := dataset.Open(dir, false)
	if err != nil {
		return datasetErr(err)
	}
	m.rows = d.Info.Splits[0].NMLPs
	return datasetErr(d.Rewrite(out, dataset.MergeTee(m.shardTee), dataset.MergeEachRow(m.row)))
}

// shardTee starts the upload of a parquet shard being written at the
// local path to its key in the dataset.
func (m *madeSplit) shardTee(path string) (io.WriteCloser, error) {
	return m.upload(dataset.DataDir, path)
}

// upload starts the upload of the shard being written at the local path
// to its key in the dataset, in its folder dir there; the writer returned
// takes its bytes right after the file, and completes the upload, and
// records the file, when closed.
func (m *madeSplit) upload(dir, path string) (io.WriteCloser, error) {
	rel := dir + "/" + filepath.Base(path)
	up, err := m.st.NewUpload(m.ctx, m.key(rel), path)
	if err != nil {
		return nil, storeErr(err)
	}
	m.uploads = append(m.uploads, up)
	return &shardUpload{Upload: up, rel: rel, m: m}, nil
}

// shardUpload is the upload of one shard of the made split.
type shardUpload struct {
	*store.Upload
	rel string
	m   *madeSplit
}

func (u *shardUpload) Close() error {
	m := u.m
	m.uploads = slices.DeleteFunc(m.uploads, func(up *store.Upload) bool { return up == u.Upload })
	info, err := u.Upload.Close()
	if err != nil {
		return storeErr(err)
	}
	m.files = append(m.files, manifest.File{Path: u.rel, SHA256: info.SHA256, Size: info.Size})
	return nil
}

// key is the key in the dataset of rel, a path relative to it.
func (m *madeSplit) key(rel string) string { return path.Join(m.dataset, rel) }

// row takes the split's next row into the prepared folder, started at
// the first, whose shape is the split's, and into the statistics.
func (m *madeSplit) row(r dataset.Row) error {
	if m.prepared == nil {
		width := len(r.FinalMeans)
		depth := len(r.LayerMeans) / width
		dir := path.Join(dataset.PreparedDir, m.split)
		tee := func(p string) (io.WriteCloser, error) { return m.upload(dir, p) }
		var err error
		m.prepared, err = dataset.NewPreparedWriter(m.root, m.split, width, depth, m.rows, tee)
		if err != nil {
			return err
		}
		m.stats = report.NewSplit(m.split, width, depth)
	}
	m.stats.Add(r)
	return m.prepared.Write(&r)
}

// finish completes what the rows made, once merged, the merged split's
// local directory, holds the shards, checks the prepared folder against
// them, and returns the summary that CombineSplits reads.
func (m *madeSplit) finish(merged string) (splitSummary, error) {
	var sum splitSummary
	if m.prepared == nil {
		return sum, fmt.Errorf("split %s has no rows", m.split)
	}
	if err := m.prepared.Close(); err != nil {
		return sum, err
	}
	m.prepared = nil
	for _, name := range []string{dataset.PreparedInfoFile, dataset.PreparedStateFile} {
		rel := path.Join(dataset.PreparedDir, m.split, name)
		info, err := m.st.PutFile(m.ctx, m.key(rel), filepath.Join(m.root, filepath.FromSlash(rel)))
		if err != nil {
			return sum, storeErr(err)
		}
		m.files = append(m.files, manifest.File{Path: rel, SHA256: info.SHA256, Size: info.Size})
	}
	// The tree was written from the rows the shards were: read both back,
	// as Push would check the dataset, so that it need not.
	if err := dataset.CheckPreparedSplit(merged, m.root); err != nil {
		return sum, fatal(bakeapi.ErrCorruptPartial, "the prepared folder of split %s: %v",
			m.split, err)
	}
	sum.Files = slices.SortedFunc(slices.Values(m.files), func(a, b manifest.File) int {
		return strings.Compare(a.Path, b.Path)
	})
	sum.Stats = m.stats
	sum.PreparedChecked = preparedCheckRule
	return sum, nil
}

// abort gives up whatever is unfinished; after finish it does nothing.
func (m *madeSplit) abort() {
	if m.prepared != nil {
		m.prepared.Abort()
	}
	for _, up := range m.uploads {
		up.Abort()
	}
	m.uploads = nil
}

// writeSummary writes sum, sealed for bakeID's split, as the summaryFile
// of the merged split being committed from dir.
func writeSummary(dir, bakeID, split string, sum splitSummary) error {
	data, err := seal.Marshal(&sum, &sum.Seal, seal.Seal{
		Key: path.Join(keys.Bake(bakeID).Merged(split), summaryFile), Bake: bakeID, Split: split,
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, summaryFile), data, 0o644)
}

// readSummary reads the splitSummary of bakeID's split from the merged
// split fetched into dir.
func readSummary(dir, bakeID, split string) (splitSummary, error) {
	var sum splitSummary
	name := path.Join(keys.Bake(bakeID).Merged(split), summaryFile)
	data, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil {
		return sum, err
	}
	id := seal.Seal{Key: name, Bake: bakeID, Split: split}
	if err := seal.Unmarshal(name, data, &sum, &sum.Seal, id); err != nil {
		return sum, lost(err)
	}
	if sum.Stats == nil {
		return sum, lost(fmt.Errorf("%s holds no statistics: %w", name, seal.ErrDamaged))
	}
	if err := manifest.CleanPaths(name, sum.Files); err != nil {
		return sum, lost(err)
	}
	return sum, nil
}
