package dataset

import (
	"cmp"
	"fmt"
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
	files        []string // the partial's parquet shards, in order
	width, depth int
	start, end   int64
}

// Keys every partial must agree on with the first one. The first group is
// whestbench's, from merge_datasets in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py.
// The second is ours: partials baked with a different sampler, algorithm, dot
// product or seeds file hold different numbers for the same MLP index and must
// never be stitched together, and partials of another seed protocol or salt
// hold names and participant seeds of another derivation, which whestbench's
// merge does not notice.
var (
	mergeCommonKeys = []string{
		"schema_version", "seed", "n_samples", "width", "depth", "backend", "total_n_mlps",
	}
	mergeProvenanceKeys = []string{
		"sampler", "algorithm_version", "dot_product", "seed_file_sha256", "seed_protocol",
	}
)

// Merge joins partial bakes of one split into the complete dataset out, as
// whestbench's merge_datasets does. Inputs must be partials of the same bake that
// cover [0, total_n_mlps) exactly once, in any order: every input is opened and
// checked against the first before any row is copied, then they are merged in
// mlp_range order by MergeStream, which finds gaps and overlaps.
//
// Errors: *MergeIncompatibleError for a wrong input kind or differing
// parameters, *MergeOverlapError, *MergeIncompleteError for gaps,
// *MergeCorruptError for rows that contradict mlp_range,
// *InvalidDatasetError for an unreadable input, and *OutputExistsError.
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
// mlp_range order: partials yields each partial's directory, or the error
// that kept it from arriving, and may delete that directory once the
// merge asks for the next one. Each partial is checked against the first
// as it arrives and its rows are copied bit-for-bit through the same writer
// a direct bake uses, so the merged parquet files are byte-identical to a
// single-host bake of the same rows, cut into the same shards: in package
// shards, the rows of a shard are a function of the split's shape and
// total_n_mlps, never of how it was sliced. Memory does not grow with the
// number of partials: besides one row and the writer's row group, the
// merge keeps the first partial's metadata and one hardware fingerprint
// per distinct group of hosts.
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
	// Every partial shares the first's split, as checkCompatible checks.
	if err := first.info.CheckLoadable(); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	m := newMerger(first, mergedAt)
	spec := bakeapi.Spec{Width: first.width, Depth: first.depth}
	fill := func(w *splitWriter) error {
		for p := first; ; {
			if err := m.add(p, w, cfg.eachRow); err != nil {
				return err
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
				return err
			}
		}
		return m.finish()
	}
	return writeSingleSplit(out, splitWrite{md: m.md, spec: spec, card: true, tee: cfg.tee, fill: fill})
}

// Rewrite writes d, a single-split dataset opened by Open, again at out:
// its metadata.json and its rows, checked as Scan checks them and cut into
// the shards every writer cuts a split of their shape and count into, as
// package shards says, whatever shards d holds them in, so that out is what a
// merge of the same rows writes. It writes no README.md: out is a bake's
// intermediate. MergeTee and MergeEachRow take its shards and rows as
// MergeStream's.
func (d *Dir) Rewrite(out string, opts ...MergeOption) error {
	var cfg mergeConfig
	for _, o := range opts {
		o(&cfg)
	}
	sd := d.Splits[0]
	fill := func(w *splitWriter) error {
		return d.Scan(func(_ *SplitData, r Row) error {
			if err := w.Write(r); err != nil || cfg.eachRow == nil {
				return err
			}
			return cfg.eachRow(r)
		})
	}
	return writeSingleSplit(out, splitWrite{
		md:   d.Meta,
		spec: bakeapi.Spec{Width: sd.Width, Depth: sd.Depth},
		tee:  cfg.tee,
		fill: fill,
	})
}

// MergeOption adjusts MergeStream.
type MergeOption func(*mergeConfig)

type mergeConfig struct {
	tee     ShardTee
	eachRow func(r Row) error
}

// MergeEachRow hands every row to f as MergeStream writes it, in order; r
// is reused for the next row. A caller that needs the rows too, as a
// bake's merge does for the prepared tree and the report, reads them with
// the merge. An error of f fails the merge.
func MergeEachRow(f func(r Row) error) MergeOption {
	return func(c *mergeConfig) { c.eachRow = f }
}

// MergeTee has MergeStream write every byte of each merged parquet shard
// to the writer tee returns for it as well, in order, right after writing
// it to the file, and close that writer once the shard is complete: a
// bake's merge streams the shards to S3 while the rows are still coming.
// tee is called with each shard's path once its file exists. An error of
// tee, or of its writer, fails the merge.
func MergeTee(tee ShardTee) MergeOption {
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
	fps      fingerprints
	row      Row // every partial's rows are read into it
}

// newMerger starts from the first partial's metadata, as merge_datasets does,
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
func (m *merger) add(p *partial, w *splitWriter, eachRow func(Row) error) error {
	switch {
	case p.start < m.next:
		return &MergeOverlapError{Msg: fmt.Sprintf("%s: mlp_range starts at %d "+
			"but the previous range ended at %d; each MLP must come from exactly one partial",
			p.dir, p.start, m.next)}
	case p.start > m.next:
		return gapError(m.next, p.start)
	}
	for _, file := range p.files {
		_, _, err := parquetio.Scan(file, &m.row, func(r Row) error {
			if int64(r.MLPID) != m.next {
				return &MergeCorruptError{Msg: fmt.Sprintf("%s: row %d has mlp_id=%d "+
					"but mlp_range [%d, %d) puts MLP %d there; re-bake this partial",
					p.dir, m.next-p.start, r.MLPID, p.start, p.end, m.next)}
			}
			m.next++
			if err := w.Write(r); err != nil || eachRow == nil {
				return err
			}
			return eachRow(r)
		})
		if err != nil {
			return err
		}
	}
	if c := p.info.CreatedAt; m.count == 0 || c < m.created {
		m.created = c
	}
	m.count++
	m.fps.add(p)
	return nil
}

// finish checks that the partials reached the end of the bake and appends
// the earliest created_at_utc, merged_at_utc, hardware_fingerprints and
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
// metadata, the split's parquet shards, and their footers' shape and row
// count.
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
	sd, rows, err := openShards(dir, p.split, files)
	if err != nil {
		return nil, err
	}
	if len(sd.Files) != len(files) {
		return nil, incompatiblef("%s: data/ holds %d parquet files, of which %d are "+
			"the shards of the partial's split %q (data/%s-NNNNN-of-MMMMM.parquet); "+
			"a partial holds its split's shards alone", dir, len(files), len(sd.Files), p.split,
			p.split)
	}
	p.files, p.width, p.depth = sd.Files, sd.Width, sd.Depth
	if info.CreatedAt == "" {
		return nil, invalidf("%s: created_at_utc is missing or empty; "+
			"merge needs it to date the merged dataset", filepath.Join(dir, MetadataFile))
	}
	shards := fmt.Sprintf("%s/%s-*.parquet", filepath.Join(dir, DataDir), p.split)
	if err := checkWidthDepth(info, p.width, p.depth, shards); err != nil {
		return nil, invalidf("%s: %v", filepath.Join(dir, MetadataFile), err)
	}
	if n := info.Splits[0].NMLPs; n != rows {
		return nil, invalidf("%s: metadata n_mlps=%d but %s holds %d rows"+fixMetadataOrRebake,
			filepath.Join(dir, MetadataFile), n, shards, rows)
	}
	if rows != p.end-p.start {
		return nil, &MergeCorruptError{Msg: fmt.Sprintf("%s: %s holds %d rows "+
			"but mlp_range [%d, %d) declares %d; re-bake this partial",
			dir, shards, rows, p.start, p.end, p.end-p.start)}
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
	return checkSameTensorCores(first, p)
}

// checkSameTensorCores refuses tf32x3 partials whose tensor cores give other
// bits: tensor cores of another architecture or kernel round the same inputs
// otherwise, so one split would hold two results. fp32 partials give the
// same bits on any device and are not compared.
func checkSameTensorCores(first, p *partial) error {
	if alg, _ := first.md.GetString("algorithm_version"); alg != bakeapi.PhiloxTF32x3Algorithm {
		return nil
	}
	a, _ := first.md.GetString("engine")
	b, _ := p.md.GetString("engine")
	ta, okA := bakeapi.ParseTensorCores(a)
	tb, okB := bakeapi.ParseTensorCores(b)
	if okA && okB && ta.SameBits(tb) {
		return nil
	}
	return incompatiblef("%s: engine=%q but %s: engine=%q; tf32x3 partials must come "+
		"from tensor cores of one architecture and kernel, which give the same bits: "+
		"bake the rest of the split on GPUs of %s's kind", p.dir, b, first.dir, a, first.dir)
}
