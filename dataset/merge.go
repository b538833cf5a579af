package dataset

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
)

// now is the merge clock, replaceable in tests.

// partial is one validated input of Merge.
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
// whestbench's (reference §4.1); the second is ours: partials baked with a
// different sampler, algorithm, dot product or seeds file hold different
// numbers for the same MLP index and must never be stitched together, and
// partials of another seed protocol or salt hold names (and participant
// seeds) of another derivation, which whestbench's merge does not notice.
var (
	mergeCommonKeys     = []string{"schema_version", "seed", "n_samples", "width", "depth", "backend", "total_n_mlps"}
	mergeProvenanceKeys = []string{"sampler", "algorithm_version", "dot_product", "seed_file_sha256", "seed_protocol"}
)

// Merge joins partial bakes of one split into the complete dataset out
// (reference §4.1). Inputs must be partials of the same bake that cover
// [0, total_n_mlps) exactly once. Rows are copied bit-for-bit in mlp_range
// order through the same writer a direct bake uses, so the merged parquet
// file is byte-identical to a single-host bake of the same rows. Rows are
// streamed one at a time; the output appears only when complete. mergedAt
// is recorded as merged_at_utc: the caller decides it, so a bake can make it
// a pure function of its own recorded start.
//
// Errors: *MergeIncompatibleError (wrong input kind, differing parameters),
// *MergeOverlapError, *MergeIncompleteError (gaps), *MergeCorruptError (rows
// that contradict mlp_range), *InvalidDatasetError (unreadable input),
// *OutputExistsError.
func Merge(inputs []string, out string, mergedAt time.Time) error {
	if len(inputs) == 0 {
		return incompatiblef("merge requires at least one input directory; pass the partial dataset directories to merge")
	}
	if err := CheckOutputFree(out); err != nil {
		return err
	}
	partials := make([]*partial, 0, len(inputs))
	for _, d := range inputs {
		p, err := openPartial(d)
		if err != nil {
			return err
		}
		if len(partials) > 0 {
			if err := checkCompatible(partials[0], p); err != nil {
				return err
			}
		}
		partials = append(partials, p)
	}
	total := partials[0].info.TotalNMLPs
	sort.SliceStable(partials, func(i, j int) bool { return partials[i].start < partials[j].start })
	var expected int64
	for _, p := range partials {
		switch {
		case p.start < expected:
			return &MergeOverlapError{Msg: fmt.Sprintf("%s: mlp_range starts at %d but the previous range ended at %d; each MLP must come from exactly one partial", p.dir, p.start, expected)}
		case p.start > expected:
			return &MergeIncompleteError{Msg: fmt.Sprintf("gap: no partial covers MLPs [%d, %d); bake that range and merge again", expected, p.start)}
		}
		expected = p.end
	}
	if expected != total {
		return &MergeIncompleteError{Msg: fmt.Sprintf("gap: no partial covers MLPs [%d, %d); bake that range and merge again", expected, total)}
	}
	md := mergedMetadata(partials, total, mergedAt)
	spec := bakeapi.Spec{Width: partials[0].width, Depth: partials[0].depth}
	return writeSingleSplit(out, md, spec, func(pw *ParquetWriter) (int, error) {
		n := 0
		var row Row // shared by the partials
		for _, p := range partials {
			next := p.start
			_, _, err := scanParquet(p.file, &row, func(r Row) error {
				if int64(r.MLPID) != next {
					return &MergeCorruptError{Msg: fmt.Sprintf("%s: row %d has mlp_id=%d but mlp_range [%d, %d) puts MLP %d there; re-bake this partial", p.dir, next-p.start, r.MLPID, p.start, p.end, next)}
				}
				next++
				n++
				return pw.Write(r)
			})
			if err != nil {
				return n, err
			}
		}
		return n, nil
	})
}

// openPartial reads and checks one merge input without decoding its rows:
// metadata, the single parquet file, and the footer's shape and row count.
func openPartial(dir string) (*partial, error) {
	md, info, files, err := openDir(dir, true)
	if err != nil {
		return nil, err
	}
	if !info.IsPartial {
		return nil, incompatiblef("%s is a complete (non-partial) dataset; merge only accepts partials (is_partial=true)", dir)
	}
	p := &partial{dir: dir, md: md, info: info, split: info.Splits[0].Name, start: info.MLPRange[0], end: info.MLPRange[1]}
	if len(files) != 1 {
		return nil, incompatiblef("%s has %d parquet files in data/; a partial has exactly one (%s)", dir, len(files), shardName(p.split, 0, 1))
	}
	if files[0] != shardName(p.split, 0, 1) {
		return nil, incompatiblef("%s: data/%s does not match the partial's split %q (expected data/%s)", dir, files[0], p.split, shardName(p.split, 0, 1))
	}
	p.file = filepath.Join(dir, dataDir, files[0])
	if info.CreatedAt == "" {
		return nil, invalidf("%s: created_at_utc is missing or empty; merge needs it to date the merged dataset", filepath.Join(dir, metadataFile))
	}
	r, err := OpenParquet(p.file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	p.width, p.depth = r.Width(), r.Depth()
	if err := checkWidthDepth(info, p.width, p.depth, p.file); err != nil {
		return nil, invalidf("%s: %v", filepath.Join(dir, metadataFile), err)
	}
	if n := info.Splits[0].NMLPs; n != r.NumRows() {
		return nil, invalidf("%s: metadata n_mlps=%d but %s holds %d rows; fix metadata.json or re-bake", filepath.Join(dir, metadataFile), n, p.file, r.NumRows())
	}
	if r.NumRows() != p.end-p.start {
		return nil, &MergeCorruptError{Msg: fmt.Sprintf("%s: %s holds %d rows but mlp_range [%d, %d) declares %d; re-bake this partial", dir, p.file, r.NumRows(), p.start, p.end, p.end-p.start)}
	}
	return p, nil
}

func checkCompatible(first, p *partial) error {
	if p.split != first.split {
		return incompatiblef("%s has split %q but %s has split %q; merge the partials of one split at a time", p.dir, p.split, first.dir, first.split)
	}
	for _, keys := range [][]string{mergeCommonKeys, mergeProvenanceKeys} {
		for _, k := range keys {
			a, _ := p.md.Get(k)
			b, _ := first.md.Get(k)
			if !jsonEqual(a, b) {
				return incompatiblef("%s: %s=%s but %s: %s=%s; only partials of one bake can be merged", p.dir, k, shownValue(k, a), first.dir, k, shownValue(k, b))
			}
		}
	}
	if p.width != first.width || p.depth != first.depth {
		return incompatiblef("%s holds width=%d depth=%d but %s holds width=%d depth=%d", p.dir, p.width, p.depth, first.dir, first.width, first.depth)
	}
	return nil
}

// mergedMetadata follows reference §2.3.4: the first partial's metadata (in
// range order) without the per-partial keys, n_mlps set to the total in
// place, then created_at_utc (the earliest), merged_at_utc,
// hardware_fingerprints and partials_count.
func mergedMetadata(partials []*partial, total int64, mergedAt time.Time) Metadata {
	md := partials[0].md.Clone()
	for _, k := range []string{"is_partial", "mlp_range", "total_n_mlps", "hardware", "created_at_utc"} {
		md.Delete(k)
	}
	md.Set("n_mlps", total)
	var created string
	for i, p := range partials {
		if c := p.info.CreatedAt; i == 0 || c < created {
			created = c
		}
	}
	return md.Set("created_at_utc", created).
		Set("merged_at_utc", isoUTC(mergedAt)).
		Set("hardware_fingerprints", hardwareFingerprints(partials)).
		Set("partials_count", len(partials))
}
