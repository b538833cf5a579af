package dataset

import (
	"cmp"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"slices"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/parquetio"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// partial is one validated input of a merge.
type partial struct {
	dir          string
	md           Metadata
	info         *Info
	split        string
	file         string // the partial's one parquet file
	width, depth int
	start, end   int64
}

// Keys every partial must agree on with the first one. The first group is
// whestbench's (merge_datasets,
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py);
// the second is ours: partials baked with a different sampler, algorithm, dot
// product or seeds file hold different numbers for the same MLP index and must
// never be stitched together, and partials of another seed protocol or salt
// hold names (and participant seeds) of another derivation, which whestbench's
// merge does not notice.
var (
	mergeCommonKeys = []string{
		"schema_version", "seed", "n_samples", "width", "depth", "backend", "total_n_mlps",
	}
	mergeProvenanceKeys = []string{
		"sampler", "algorithm_version", "dot_product", "seed_file_sha256", "seed_protocol",
	}
)

// Merge joins partial bakes of one split into the complete dataset out
// (whestbench's merge_datasets). Inputs must be partials of the same bake that
// cover [0, total_n_mlps) exactly once, in any order: every input is opened and
// checked against the first before any row is copied, then they are merged in
// mlp_range order by MergeStream, which finds gaps and overlaps.
//
// Errors: *MergeIncompatibleError (wrong input kind, differing parameters),
// *MergeOverlapError, *MergeIncompleteError (gaps), *MergeCorruptError (rows
// that contradict mlp_range), *InvalidDatasetError (unreadable input),
// *OutputExistsError.
func Merge(inputs []string, out string, mergedAt time.Time) error {
	if len(inputs) == 0 {
		return noPartials()
	}
	if err := CheckOutputFree(out); err != nil {
		return err
	}
	type input struct {
		dir   string
		start int64
	}
	ins := make([]input, 0, len(inputs))
	var first *partial
	for _, d := range inputs {
		p, err := openPartial(d)
		if err != nil {
			return err
		}
		if first == nil {
			first = p
		} else if err := checkCompatible(first, p); err != nil {
			return err
		}
		ins = append(ins, input{d, p.start})
	}
	slices.SortStableFunc(ins, func(a, b input) int { return cmp.Compare(a.start, b.start) })
	return MergeStream(out, mergedAt, func(yield func(string, error) bool) {
		for _, in := range ins {
			if !yield(in.dir, nil) {
				return
			}
		}
	})
}

func noPartials() error {
	return incompatiblef("merge requires at least one input directory; " +
		"pass the partial dataset directories to merge")
}

// MergeStream is Merge of partials that arrive one at a time, already in
// mlp_range order: partials yields each partial's directory (or the error
// that kept it from arriving), and may delete that directory once the
// merge asks for the next one. Each partial is checked against the first
// as it arrives and its rows are copied bit-for-bit through the same writer
// a direct bake uses, so the merged parquet file is byte-identical to a
// single-host bake of the same rows. Memory does not grow with the number
// of partials: besides one row and the writer's row group, the merge keeps
// the first partial's metadata and one hardware fingerprint per distinct
// group of hosts.
// The output appears only when complete. mergedAt is recorded as
// merged_at_utc: the caller decides it, so a bake can make it a pure
// function of its own recorded start.
func MergeStream(
	out string,
	mergedAt time.Time,
	partials iter.Seq2[string, error],
	opts ...MergeOption,
) error {
	var cfg mergeConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := CheckOutputFree(out); err != nil {
		return err
	}
	next, stop := iter.Pull2(partials)
	defer stop()
	dir, err, ok := next()
	switch {
	case !ok:
		return noPartials()
	case err != nil:
		return err
	}
	first, err := openPartial(dir)
	if err != nil {
		return err
	}
	// Every partial shares the first's split (checkCompatible).
	if err := first.info.CheckLoadable(); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	m := newMerger(first, mergedAt)
	spec := bakeapi.Spec{Width: first.width, Depth: first.depth}
	fill := func(pw *ParquetWriter) (int, error) {
		for p := first; ; {
			if err := m.add(p, pw, cfg.eachRow); err != nil {
				return m.rows, err
			}
			dir, err, ok := next()
			if !ok {
				break
			}
			if err == nil {
				p, err = openPartial(dir)
			}
			if err == nil {
				err = checkCompatible(first, p)
			}
			if err != nil {
				return m.rows, err
			}
		}
		return m.rows, m.finish()
	}
	return writeSingleSplit(out, splitWrite{md: m.md, spec: spec, card: true, tee: cfg.tee, fill: fill})
}

// MergeOption adjusts MergeStream.
type MergeOption func(*mergeConfig)

type mergeConfig struct {
	tee     func(path string) (io.Writer, error)
	eachRow func(r Row) error
}

// MergeEachRow hands every row to f as MergeStream writes it, in order (r
// is reused for the next row): a caller that needs the rows too, as a
// bake's merge does for the prepared tree and the report, reads them with
// the merge. An error of f fails the merge.
func MergeEachRow(f func(r Row) error) MergeOption {
	return func(c *mergeConfig) { c.eachRow = f }
}

// MergeTee has MergeStream write every byte of the merged parquet file
// (the split's one shard, SingleShard) to the writer tee returns as well,
// in order, right after writing it to the file: a bake's merge streams it
// to S3 while the rows are still coming. tee is called with the file's
// path once the file exists. An error of tee, or of its writer, fails the
// merge.
func MergeTee(tee func(path string) (io.Writer, error)) MergeOption {
	return func(c *mergeConfig) { c.tee = tee }
}

// merger is what a merge in progress knows of the partials it has copied.
type merger struct {
	md       Metadata // the first partial's, completed by finish
	mergedAt time.Time
	total    int64
	next     int64 // the first MLP the next partial must start at
	created  string
	count    int
	rows     int
	fps      fingerprints
	row      Row // every partial's rows are read into it
}

// newMerger starts from the first partial's metadata (as merge_datasets does)
// without the per-partial keys and with n_mlps set to the total in place;
// finish appends the keys that depend on every partial.
func newMerger(first *partial, mergedAt time.Time) *merger {
	md := first.md.Clone()
	for _, k := range []string{
		"is_partial", "mlp_range", "total_n_mlps", "hardware", "created_at_utc",
	} {
		md.Delete(k)
	}
	md.Set("n_mlps", first.info.TotalNMLPs)
	return &merger{md: md, mergedAt: mergedAt, total: first.info.TotalNMLPs}
}

// add copies p's rows after checking that p starts where the previous
// partial ended.
func (m *merger) add(p *partial, pw *ParquetWriter, eachRow func(Row) error) error {
	switch {
	case p.start < m.next:
		return &MergeOverlapError{Msg: fmt.Sprintf("%s: mlp_range starts at %d "+
			"but the previous range ended at %d; each MLP must come from exactly one partial",
			p.dir, p.start, m.next)}
	case p.start > m.next:
		return gapError(m.next, p.start)
	}
	_, _, err := parquetio.Scan(p.file, &m.row, func(r Row) error {
		if int64(r.MLPID) != m.next {
			return &MergeCorruptError{Msg: fmt.Sprintf("%s: row %d has mlp_id=%d "+
				"but mlp_range [%d, %d) puts MLP %d there; re-bake this partial",
				p.dir, m.next-p.start, r.MLPID, p.start, p.end, m.next)}
		}
		m.next++
		m.rows++
		if err := pw.Write(r); err != nil || eachRow == nil {
			return err
		}
		return eachRow(r)
	})
	if err != nil {
		return err
	}
	if c := p.info.CreatedAt; m.count == 0 || c < m.created {
		m.created = c
	}
	m.count++
	m.fps.add(p)
	return nil
}

// finish checks that the partials reached the end of the bake and appends
// created_at_utc (the earliest), merged_at_utc, hardware_fingerprints and
// partials_count to the metadata.
func (m *merger) finish() error {
	if m.next != m.total {
		return gapError(m.next, m.total)
	}
	m.md.Set("created_at_utc", m.created).
		Set("merged_at_utc", isoUTC(m.mergedAt)).
		Set("hardware_fingerprints", m.fps.list()).
		Set("partials_count", m.count)
	return nil
}

// gapError is the MLPs [from, to) that no partial covers.
func gapError(from, to int64) error {
	return &MergeIncompleteError{Msg: fmt.Sprintf("gap: no partial covers MLPs [%d, %d); "+
		"bake that range and merge again", from, to)}
}

// openPartial reads and checks one merge input without decoding its rows:
// metadata, the single parquet file, and the footer's shape and row count.
func openPartial(dir string) (*partial, error) {
	md, info, files, err := openDir(dir, true)
	if err != nil {
		return nil, err
	}
	if !info.IsPartial {
		return nil, incompatiblef("%s is a complete (non-partial) dataset; "+
			"merge only accepts partials (is_partial=true)", dir)
	}
	p := &partial{
		dir:   dir,
		md:    md,
		info:  info,
		split: info.Splits[0].Name,
		start: info.MLPRange[0],
		end:   info.MLPRange[1],
	}
	shard := shardName(p.split, 0, 1)
	if len(files) != 1 {
		return nil, incompatiblef("%s has %d parquet files in data/; "+
			"a partial has exactly one (%s)", dir, len(files), shard)
	}
	if files[0] != shard {
		return nil, incompatiblef("%s: data/%s does not match the partial's split %q "+
			"(expected data/%s)", dir, files[0], p.split, shard)
	}
	p.file = filepath.Join(dir, dataDir, files[0])
	if info.CreatedAt == "" {
		return nil, invalidf("%s: created_at_utc is missing or empty; "+
			"merge needs it to date the merged dataset", filepath.Join(dir, MetadataFile))
	}
	r, err := OpenParquet(p.file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	p.width, p.depth = r.Width(), r.Depth()
	if err := checkWidthDepth(info, p.width, p.depth, p.file); err != nil {
		return nil, invalidf("%s: %v", filepath.Join(dir, MetadataFile), err)
	}
	if n := info.Splits[0].NMLPs; n != r.NumRows() {
		return nil, invalidf("%s: metadata n_mlps=%d but %s holds %d rows"+fixMetadataOrRebake,
			filepath.Join(dir, MetadataFile), n, p.file, r.NumRows())
	}
	if r.NumRows() != p.end-p.start {
		return nil, &MergeCorruptError{Msg: fmt.Sprintf("%s: %s holds %d rows "+
			"but mlp_range [%d, %d) declares %d; re-bake this partial",
			dir, p.file, r.NumRows(), p.start, p.end, p.end-p.start)}
	}
	return p, nil
}

func checkCompatible(first, p *partial) error {
	if p.split != first.split {
		return incompatiblef("%s has split %q but %s has split %q; "+
			"merge the partials of one split at a time", p.dir, p.split, first.dir, first.split)
	}
	for _, keys := range [][]string{mergeCommonKeys, mergeProvenanceKeys} {
		for _, k := range keys {
			a, _ := p.md.Get(k)
			b, _ := first.md.Get(k)
			if !pyjson.Equal(a, b) {
				return incompatiblef("%s: %s=%s but %s: %s=%s; "+
					"only partials of one bake can be merged",
					p.dir, k, shownValue(k, a), first.dir, k, shownValue(k, b))
			}
		}
	}
	if p.width != first.width || p.depth != first.depth {
		return incompatiblef("%s holds width=%d depth=%d but %s holds width=%d depth=%d",
			p.dir, p.width, p.depth, first.dir, first.width, first.depth)
	}
	return nil
}
