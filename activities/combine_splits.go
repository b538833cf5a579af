package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// CombineSplits builds the multi-split dataset, also of a single split,
// with its report, and commits it; then, unless the bake keeps its
// intermediates, it deletes the merged splits, which the dataset now
// holds. Each merged split holds MergeSplit's summary of the split's files
// in the dataset.
func (a *Activities) CombineSplits(
	ctx context.Context,
	in bakeapi.CombineSplitsInput,
) (bakeapi.CombineSplitsOutput, error) {
	defer keepAlive(ctx)()
	prefix := keys.Bake(in.BakeID).Dataset()
	out := bakeapi.CombineSplitsOutput{Prefix: prefix}
	// Step 1. Committed already, by this bake: a manifest at the key that
	// is damaged, or another bake's, is never taken for this bake's commit.
	id := seal.Seal{Bake: in.BakeID}
	if m, sum, done, err := committed(ctx, a.Store, prefix, id); damaged(err) {
		return out, lost(err)
	} else if err != nil {
		return out, err
	} else if done {
		out.ManifestSHA256 = sum
		out.Files = len(m.Files)
		return out, a.afterCombine(ctx, in)
	}
	dir, err := a.scratch("combine-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	// Step 2. Combine what the merges made of the splits.
	final := filepath.Join(dir, "dataset")
	c, err := a.combineMade(ctx, in, dir, final)
	if err != nil {
		return out, err
	}
	// Step 3. Commit, with the word that the tree was checked.
	m, sum, err := commitDir(ctx, a.Store, c)
	if err != nil {
		return out, err
	}
	out.ManifestSHA256 = sum
	out.Files = len(m.Files)
	return out, a.afterCombine(ctx, in)
}

// afterCombine drops what the committed dataset now holds, in dropMerged, and
// aborts the incomplete uploads that killed attempts of the bake's steps
// left under its prefix, such as a merge's shard or a slice's partial: nothing of
// the bake writes there once its dataset is committed, so no attempt comes
// back to complete them, and their parts would stay stored.
func (a *Activities) afterCombine(ctx context.Context, in bakeapi.CombineSplitsInput) error {
	if err := a.dropMerged(ctx, in); err != nil {
		return err
	}
	_, err := a.Store.AbortUploads(ctx, keys.Bake(in.BakeID).Prefix())
	return storeErr(err)
}

// combineMade combines the splits from what their merges made: each
// merged split holds its metadata.json and, in place of its rows, a
// summary, summaryFile, of the files the merge wrote at their keys in the
// dataset, its parquet shards and prepared folder, and of the statistics of
// its rows, so no row is read and no byte of them moves. It returns the
// commit of final.
func (a *Activities) combineMade(
	ctx context.Context,
	in bakeapi.CombineSplitsInput,
	dir, final string,
) (commit, error) {
	prefix := keys.Bake(in.BakeID).Dataset()
	c := commit{dir: final, prefix: prefix, id: seal.Seal{Bake: in.BakeID},
		placed: map[string]manifest.File{}}
	inputs := make([]string, len(in.Splits))
	var stats []*report.Split
	checked := true
	for i, p := range in.Splits {
		inputs[i] = filepath.Join(dir, strconv.Itoa(i))
		sum, err := a.summarize(ctx, in.BakeID, p, inputs[i])
		if err != nil {
			return c, err
		}
		// The merge wrote them, before it committed the merged split.
		for _, f := range sum.Files {
			key := path.Join(prefix, f.Path)
			switch info, err := a.Store.Stat(ctx, key); {
			case errors.Is(err, store.ErrNotFound):
				return c, goneFile(a.Store, p, key, in.BakeID)
			case err != nil:
				return c, storeErr(err)
			case info.Size != f.Size:
				return c, lost(fmt.Errorf("%s holds %d bytes, where the merge of %s wrote %d: %w",
					uri(a.Store, key), info.Size, p, f.Size, seal.ErrDamaged))
			}
			if _, twice := c.placed[f.Path]; twice {
				return c, lost(fmt.Errorf("the merges of two splits list %s, %s's among them: %w",
					uri(a.Store, key), p, seal.ErrDamaged))
			}
			c.placed[f.Path] = f
		}
		stats = append(stats, sum.Stats)
		checked = checked && sum.PreparedChecked == preparedCheckRule
	}
	if err := report.CombineSummaries(inputs, stats, final, in.DefaultSplit); err != nil {
		return c, datasetErr(err)
	}
	if checked {
		c.vouch = func(sum string) error { return a.vouchPrepared(ctx, in.BakeID, sum) }
	}
	return c, nil
}

// summarize fetches the merged split committed at prefix into dir and
// returns the summary it holds.
func (a *Activities) summarize(
	ctx context.Context,
	bakeID, prefix, dir string,
) (splitSummary, error) {
	m, err := readCommitted(ctx, a.Store, prefix, seal.Seal{Bake: bakeID})
	if err != nil {
		return splitSummary{}, err
	}
	if !slices.ContainsFunc(m.Files, func(f manifest.File) bool { return f.Path == summaryFile }) {
		return splitSummary{}, lost(fmt.Errorf("%s/ holds no %s: %w",
			uri(a.Store, prefix), summaryFile, seal.ErrDamaged))
	}
	if err := fetchFiles(ctx, a.Store, prefix, m, dir, bakeID); err != nil {
		return splitSummary{}, err
	}
	return readSummary(dir, bakeID, m.Seal.Split)
}

// dropMerged deletes the merged splits once the dataset holds them, and
// their slices and the slices' state, unless the bake keeps its
// intermediates.
func (a *Activities) dropMerged(ctx context.Context, in bakeapi.CombineSplitsInput) error {
	if in.KeepIntermediates {
		return nil
	}
	b := keys.Bake(in.BakeID)
	for _, p := range in.Splits {
		if err := a.drop(ctx, p+"/"); err != nil {
			return err
		}
		// The merge left the split's slices to the combine.
		if split, ok := b.MergedSplit(p); ok {
			err := a.dropSlices(ctx, bakeapi.MergeSplitInput{BakeID: in.BakeID, Split: split})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
