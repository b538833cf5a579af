package activities

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// splitSummary is what a merged split holds in place of its rows
// (summaryFile, beside its metadata.json), so that CombineSplits combines
// the split without reading a row: the files of the bake's dataset that
// the merge wrote at their keys (by path in the dataset, with sha256 and
// size: the parquet shard and the prepared folder), the statistics of the
// split's rows for the report, and whether the merge checked the prepared
// folder against the shard (the rule of preparedCheckRule).
type splitSummary struct {
	Files           []manifest.File `json:"files"`
	Stats           *report.Split   `json:"stats"`
	PreparedChecked string          `json:"prepared_checked"`
	Seal            seal.Seal       `json:"seal"`
}

// summaryFile is the splitSummary's file in a merged split. A merged split
// of an earlier version has none, and its shard instead.
const summaryFile = "summary.json"

// madeSplit is what a merge makes of its split for the bake's dataset as
// the rows go by: the parquet shard (shardTee) and the prepared folder
// (row) go up to their keys in the dataset while they are written, and the
// report's statistics are gathered, so that when the last row is merged
// only the last parts are left to send.
type madeSplit struct {
	ctx      context.Context
	st       *store.Store
	split    string
	root     string // the local prepared folder is root/prepared/<split>/
	dataset  string // the bake's dataset prefix
	shard    *store.Upload
	arrow    *store.Upload
	prepared *dataset.PreparedWriter
	stats    *report.Split
}

// newMadeSplit starts the made split of bakeID's split, with its local
// files under root.
func (a *Activities) newMadeSplit(ctx context.Context, bakeID, split, root string) *madeSplit {
	return &madeSplit{
		ctx: ctx, st: a.Store, split: split, root: root, dataset: keys.Bake(bakeID).Dataset(),
	}
}

// from makes the split from the complete single-split directory dir (a
// fetched slice or merged split that holds its rows): its rows (checked)
// into the prepared folder and the statistics, its shard to the dataset.
func (m *madeSplit) from(dir string) error {
	shard := filepath.Join(dir, filepath.FromSlash(dataset.SingleShard(m.split)))
	tee, err := m.shardTee(shard)
	if err != nil {
		return err
	}
	d, err := dataset.Open(dir, false)
	if err == nil {
		err = d.Scan(func(_ *dataset.SplitData, r dataset.Row) error { return m.row(r) })
	}
	if err != nil {
		return datasetErr(err)
	}
	// The shard is written already: its bytes, in order, are what the
	// upload is told it has.
	f, err := os.Open(shard)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tee, f)
	return err
}

// shardTee starts the upload of the merged shard, being written at the
// local path, to its key in the dataset; the writer returned takes its
// bytes right after the file.
func (m *madeSplit) shardTee(path string) (io.Writer, error) {
	up, err := m.st.NewUpload(m.ctx, m.key(dataset.SingleShard(m.split)), path)
	if err != nil {
		return nil, storeErr(err)
	}
	m.shard = up
	return up, nil
}

// key is the key in the dataset of rel, a path relative to it.
func (m *madeSplit) key(rel string) string { return path.Join(m.dataset, rel) }

// row takes the split's next row: into the prepared folder (started at
// the first, whose shape is the split's) and the statistics.
func (m *madeSplit) row(r dataset.Row) error {
	if m.prepared == nil {
		width := len(r.FinalMeans)
		depth := len(r.LayerMeans) / width
		rel := m.preparedPath(dataset.PreparedArrowFile)
		up, err := m.st.NewUpload(m.ctx, m.key(rel), filepath.Join(m.root, filepath.FromSlash(rel)))
		if err != nil {
			return storeErr(err)
		}
		m.arrow = up
		if m.prepared, err = dataset.NewPreparedWriter(m.root, m.split, width, depth, up); err != nil {
			return err
		}
		m.stats = report.NewSplit(m.split, width, depth)
	}
	m.stats.Add(r)
	return m.prepared.Write(&r)
}

// preparedPath is file's path in the split's prepared folder, relative to
// a dataset.
func (m *madeSplit) preparedPath(file string) string {
	return path.Join(dataset.PreparedDir, m.split, file)
}

// finish completes what the rows made, once merged (the merged split's
// local directory) holds the shard, checks the prepared folder against it,
// and returns the summary that CombineSplits reads.
func (m *madeSplit) finish(merged string) (splitSummary, error) {
	var sum splitSummary
	if m.prepared == nil || m.shard == nil {
		return sum, fmt.Errorf("split %s has no rows", m.split)
	}
	if err := m.prepared.Close(); err != nil {
		return sum, err
	}
	m.prepared = nil
	rel := dataset.SingleShard(m.split)
	for _, f := range []struct {
		path string
		up   *store.Upload
	}{{rel, m.shard}, {m.preparedPath(dataset.PreparedArrowFile), m.arrow}} {
		info, err := f.up.Close()
		if err != nil {
			return sum, storeErr(err)
		}
		sum.Files = append(sum.Files, manifest.File{Path: f.path, SHA256: info.SHA256, Size: info.Size})
	}
	m.shard, m.arrow = nil, nil
	for _, name := range []string{dataset.PreparedInfoFile, dataset.PreparedStateFile} {
		rel := m.preparedPath(name)
		info, err := m.st.PutFile(m.ctx, m.key(rel), filepath.Join(m.root, filepath.FromSlash(rel)))
		if err != nil {
			return sum, storeErr(err)
		}
		sum.Files = append(sum.Files, manifest.File{Path: rel, SHA256: info.SHA256, Size: info.Size})
	}
	// The tree was written from the rows the shard was: read both back,
	// as Push would check the dataset, so that it need not.
	if err := dataset.CheckPreparedSplit(merged, m.root); err != nil {
		return sum, fatal(bakeapi.ErrCorruptPartial, "the prepared folder of split %s: %v",
			m.split, err)
	}
	sum.Stats = m.stats
	sum.PreparedChecked = preparedCheckRule
	return sum, nil
}

// abort gives up whatever is unfinished; after finish it does nothing.
func (m *madeSplit) abort() {
	if m.prepared != nil {
		m.prepared.Abort()
	}
	for _, up := range []*store.Upload{m.shard, m.arrow} {
		if up != nil {
			up.Abort()
		}
	}
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
