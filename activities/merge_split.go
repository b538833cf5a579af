package activities

import (
	"context"
	"os"
	"path/filepath"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
)

// MergeSplit merges the slices' partials into the complete split (or takes a
// single slice that already covers the split) and commits it.
func (a *Activities) MergeSplit(ctx context.Context, in bakeapi.MergeSplitInput) (bakeapi.MergeSplitOutput, error) {
	defer keepAlive(ctx)()
	prefix := keys.Bake(in.BakeID).Merged(in.Split)
	out := bakeapi.MergeSplitOutput{Prefix: prefix}
	// Step 1. Committed already.
	if _, sum, done, err := committed(ctx, a.Store, prefix); err != nil {
		return out, err
	} else if done {
		out.ManifestSHA256 = sum
		return out, a.countRows(ctx, prefix, &out)
	}
	// Step 2. Fetch every slice, checking its manifest's sha256s.
	dir, err := a.scratch("merge-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	parts, err := downloadAll(ctx, a.Store, slicePrefixes(in), dir)
	if err != nil {
		return out, err
	}
	// Step 3. Merge locally with the same code as `whestbake dataset merge`.
	merged := filepath.Join(dir, "merged")
	if len(parts) == 1 {
		merged = parts[0] // one slice covering the split is already complete
		if _, err := dataset.ReadDir(merged, false); err != nil {
			return out, datasetErr(err)
		}
	} else if err := dataset.Merge(parts, merged, recordedOrNow(in.CreatedAt)); err != nil {
		return out, datasetErr(err)
	}
	// Step 4. Commit.
	_, sum, err := commitDir(ctx, a.Store, merged, prefix)
	if err != nil {
		return out, err
	}
	out.ManifestSHA256 = sum
	return out, a.countRows(ctx, prefix, &out)
}

// slicePrefixes lists the split's slice prefixes in slice order: slice k of
// NSlices is at its deterministic key, or, in histories from before NSlices,
// the input lists them.
func slicePrefixes(in bakeapi.MergeSplitInput) []string {
	if in.NSlices == 0 {
		return in.Slices
	}
	b := keys.Bake(in.BakeID)
	out := make([]string, in.NSlices)
	for k := range out {
		out[k] = b.Slice(in.Split, k)
	}
	return out
}

// countRows reads n_mlps from the committed metadata.json.
func (a *Activities) countRows(ctx context.Context, prefix string, out *bakeapi.MergeSplitOutput) error {
	data, err := a.Store.Get(ctx, prefix+"/metadata.json")
	if err != nil {
		return storeErr(err)
	}
	md := dataset.NewObject()
	if err := md.UnmarshalJSON(data); err != nil {
		return fatal(bakeapi.ErrCorruptPartial, "%s/metadata.json: %v", prefix, err)
	}
	n, _ := md.GetInt("n_mlps")
	out.NMLPs = int(n)
	return nil
}
