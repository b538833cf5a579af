package activities

import (
	"context"
	"os"
	"path/filepath"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/report"
	"github.com/whestbake/whestbake/internal/seal"
)

// CombineSplits builds the multi-split dataset (also of a single split),
// with its report, and commits it; then, unless the bake keeps its intermediates, it
// deletes the merged splits, which the dataset now holds.
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
		return out, a.dropMerged(ctx, in)
	}
	dir, err := a.scratch("combine-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	// Step 2. Fetch the merged splits.
	inputs, err := downloadAll(ctx, a.Store, in.Splits, dir, id)
	if err != nil {
		return out, err
	}
	// Step 3. Combine and report with the same code as `whestbake dataset
	// combine-splits`, so a local bake gives the same bytes.
	final := filepath.Join(dir, "dataset")
	if err := report.Combine(inputs, final, in.DefaultSplit); err != nil {
		return out, datasetErr(err)
	}
	// Step 4. Commit.
	m, sum, err := commitDir(ctx, a.Store, final, prefix, id)
	if err != nil {
		return out, err
	}
	out.ManifestSHA256 = sum
	out.Files = len(m.Files)
	return out, a.dropMerged(ctx, in)
}

// dropMerged deletes the merged splits once the dataset holds them, unless
// the bake keeps its intermediates.
func (a *Activities) dropMerged(ctx context.Context, in bakeapi.CombineSplitsInput) error {
	if in.KeepIntermediates {
		return nil
	}
	for _, p := range in.Splits {
		if err := a.drop(ctx, p+"/"); err != nil {
			return err
		}
	}
	return nil
}
