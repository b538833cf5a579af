package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// MergeSplit merges the split's slices beside them, as BakeWorkflow runs
// it: it takes each slice as soon as it and those before it are committed,
// so that when the last one lands only its own rows are left to merge. A
// slice not committed yet is waited for, not missing. From the one pass
// over the rows it makes everything of the split that the bake's dataset
// holds, through madeSplit: the parquet shards and the prepared folder, streamed
// to their keys in the dataset as they are written, and the statistics of
// the report. The merged split it commits holds the split's metadata.json
// and, in place of its rows, their summary, summaryFile, which
// CombineSplits reads.
//
// The partials stream through the merge in slice order, a few fetched
// ahead and each deleted from the local disk once its rows are copied, so
// a split of 100,000 one-MLP slices takes as little memory and scratch
// space as one of ten (docs/benchmarks.md). A failed attempt starts over:
// the merged file is written in one pass and cannot be resumed, and a
// merge is one GET per file of each partial, a small share of what the
// slices cost.
//
// The slices and their state stay: the merge may see the last slice
// committed before the split workflow sees that slice's activity close,
// and an attempt the server retries then, its completion lost, would find
// its results gone and compute the slice again. The combine, which runs
// once every split workflow has closed, drops them in dropMerged.
func (a *Activities) MergeSplit(
	ctx context.Context,
	in bakeapi.MergeSplitInput,
) (bakeapi.MergeSplitOutput, error) {
	defer keepAlive(ctx)()
	// Step 1. Committed already.
	if out, done, err := a.alreadyMerged(ctx, in); err != nil || done {
		return out, err
	}
	prefix := keys.Bake(in.BakeID).Merged(in.Split)
	out := bakeapi.MergeSplitOutput{Prefix: prefix}
	id := seal.Seal{Bake: in.BakeID, Split: in.Split}
	// Step 2. Merge the slices as they arrive, each checked against its
	// manifest's sha256s, with the same code as `whestbake dataset merge`.
	dir, err := a.scratch("merge-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	merged, err := a.mergeAsCommitted(ctx, in, dir)
	if errors.Is(err, errMergedMeanwhile) {
		out, _, err := a.alreadyMerged(ctx, in)
		return out, err
	}
	if err != nil {
		return out, err
	}
	// Step 3. Commit.
	m, sum, err := commitDir(ctx, a.Store, commit{dir: merged, prefix: prefix, id: id})
	if err != nil {
		return out, err
	}
	out.ManifestSHA256 = sum
	return out, a.countRows(ctx, in.BakeID, prefix, m, &out)
}

// alreadyMerged is the output of an earlier attempt's merge, if one
// committed the split, whose intermediates may not be deleted yet, by this
// bake: a damaged or foreign commit cannot be told from a good one's
// partials, which may be gone, so it fails the merge. A restart after the
// bake combined its splits, and deleted them, finds the dataset instead.
func (a *Activities) alreadyMerged(
	ctx context.Context,
	in bakeapi.MergeSplitInput,
) (bakeapi.MergeSplitOutput, bool, error) {
	b := keys.Bake(in.BakeID)
	prefix := b.Merged(in.Split)
	out := bakeapi.MergeSplitOutput{Prefix: prefix}
	id := seal.Seal{Bake: in.BakeID, Split: in.Split}
	if m, sum, done, err := committed(ctx, a.Store, prefix, id); damaged(err) {
		return out, false, lost(err)
	} else if err != nil {
		return out, false, err
	} else if done {
		out.ManifestSHA256 = sum
		return out, true, a.countRows(ctx, in.BakeID, prefix, m, &out)
	}
	bakeSeal := seal.Seal{Bake: in.BakeID}
	if _, _, done, err := committed(ctx, a.Store, b.Dataset(), bakeSeal); damaged(err) {
		return out, false, lost(err)
	} else if err != nil || done {
		out.NMLPs = in.NMLPs
		return out, done, err
	}
	return out, false, nil
}

// mergeAsCommitted merges the split's slices as they are committed and
// makes the split for the bake's dataset on the way, with madeSplit; it
// returns the path of the merged split in dir, which holds the split's
// metadata and the summary of what was made, in place of its rows.
func (a *Activities) mergeAsCommitted(
	ctx context.Context,
	in bakeapi.MergeSplitInput,
	dir string,
) (string, error) {
	made := a.newMadeSplit(ctx, in.BakeID, in.Split, int64(in.NMLPs), filepath.Join(dir, "made"))
	defer made.abort()
	merged := filepath.Join(dir, "merged")
	fetch := func(ctx context.Context, prefix, dir string) error {
		return a.fetchSlice(ctx, in, prefix, dir)
	}
	if prefixes := slicePrefixes(in); len(prefixes) == 1 {
		// One slice covering the split is already complete: its rows are
		// written again, into the shards a merge of them writes.
		slice := filepath.Join(dir, "slice")
		if err := awaitDir(ctx, a.Store, prefixes[0]); err != nil {
			return "", err
		}
		if err := fetch(ctx, prefixes[0], slice); err != nil {
			return "", err
		}
		if err := made.from(slice, merged); err != nil {
			return "", err
		}
		if err := os.RemoveAll(slice); err != nil {
			return "", err
		}
	} else {
		// The merged shards go up to their keys in the dataset while they
		// are written, so that only the last one's last part is left when
		// the rows are.
		err := dataset.MergeStream(
			merged,
			recordedOrNow(in.CreatedAt),
			fetchInOrder(ctx, a.Store, prefixes, dir, fetch),
			dataset.MergeTee(made.shardTee),
			dataset.MergeEachRow(made.row),
		)
		if err != nil {
			return "", datasetErr(err)
		}
	}
	// The split's files in the bake's dataset, before the merged split is
	// committed; it holds their summary in place of its rows.
	summary, err := made.finish(merged)
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(filepath.Join(merged, dataset.DataDir)); err != nil {
		return "", err
	}
	return merged, writeSummary(merged, in.BakeID, in.Split, summary)
}

// dropSliceState deletes the split's identity blocks, per-MLP results and
// checkpoints, unless the bake keeps its intermediates.
func (a *Activities) dropSliceState(ctx context.Context, in bakeapi.MergeSplitInput) error {
	if in.KeepIntermediates {
		return nil
	}
	for _, f := range keys.Bake(in.BakeID).SliceState(in.Split) {
		if err := a.drop(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// dropSlices deletes the split's slice partials and what remains of their
// state, which a zombie attempt may have written since, unless the bake keeps
// its intermediates.
func (a *Activities) dropSlices(ctx context.Context, in bakeapi.MergeSplitInput) error {
	if in.KeepIntermediates {
		return nil
	}
	if err := a.dropSliceState(ctx, in); err != nil {
		return err
	}
	return a.drop(ctx, keys.Bake(in.BakeID).Slices(in.Split))
}

// drop deletes every object under folder.
func (a *Activities) drop(ctx context.Context, folder string) error {
	d, err := a.Store.DeletePrefix(ctx, folder, nil)
	if err != nil {
		return storeErr(err)
	}
	if d.Objects > 0 && activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, "deleted "+folder)
		activity.GetLogger(ctx).Info(
			"intermediates deleted",
			"folder", folder,
			"objects", d.Objects,
			"bytes", d.Bytes,
		)
	}
	return nil
}

// slicePrefixes lists the split's slice prefixes in slice order: slice k of
// NSlices is at its deterministic key.
func slicePrefixes(in bakeapi.MergeSplitInput) []string {
	b := keys.Bake(in.BakeID)
	out := make([]string, in.NSlices)
	for k := range out {
		out[k] = b.Slice(in.Split, k)
	}
	return out
}

// countRows reads n_mlps from the metadata.json that bake bakeID committed
// at prefix, checked against the directory's manifest m.
func (a *Activities) countRows(
	ctx context.Context,
	bakeID, prefix string,
	m manifest.Manifest,
	out *bakeapi.MergeSplitOutput,
) error {
	key := prefix + "/metadata.json"
	data, err := a.Store.GetMax(ctx, key, dataset.MaxMetadataBytes)
	if errors.Is(err, store.ErrNotFound) {
		return goneFile(a.Store, prefix, key, bakeID)
	}
	if err != nil {
		return storeErr(err)
	}
	isMetadata := func(f manifest.File) bool { return f.Path == "metadata.json" }
	if i := slices.IndexFunc(m.Files, isMetadata); i < 0 ||
		m.Files[i].SHA256 != store.SHA256Hex(data) {
		return lost(
			fmt.Errorf("%s does not match the manifest of %s: %w", key, prefix, seal.ErrDamaged),
		)
	}
	md := dataset.NewObject()
	if err := md.UnmarshalJSON(data); err != nil {
		return fatal(bakeapi.ErrCorruptPartial, "%s/metadata.json: %v", prefix, err)
	}
	n, _ := md.GetInt("n_mlps")
	out.NMLPs = int(n)
	return nil
}
