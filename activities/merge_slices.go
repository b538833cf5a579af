package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// errMergedMeanwhile is what a merge attempt finds when the slices it
// reads went because another attempt merged the split meanwhile
// and the bake combined it: the combine deletes the slices on purpose, so
// that is no damage, and the merge's output is that commit: alreadyMerged.
var errMergedMeanwhile = errors.New("the split was merged and combined meanwhile")

// fetchSlice fetches the committed partial of a slice of in's split at
// prefix into dir, every file checked against its manifest. A partial that
// fails, its manifest or a file damaged or a file gone, cannot be merged, but
// its slice can commit it again from its per-MLP results, as BakeSlice
// does when its own check of a commit fails: the merge discards the commit
// with discardSlice and fails, saying that a restart of the bake heals it.
func (a *Activities) fetchSlice(
	ctx context.Context,
	in bakeapi.MergeSplitInput,
	prefix, dir string,
) error {
	id := seal.Seal{Bake: in.BakeID, Split: in.Split}
	m, _, err := readManifest(ctx, a.Store, prefix, id)
	if err == nil {
		err = manifest.Fetch(ctx, a.Store, prefix, m, dir)
	}
	var missing *manifest.MissingError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &missing):
		fix, err := a.discardSlice(ctx, in, prefix, err)
		if err != nil {
			return err
		}
		return gone(goneFileText(a.Store, prefix, missing.Key), fix)
	case damaged(err), errors.Is(err, manifest.ErrMismatch), errors.Is(err, manifest.ErrUnsafePath):
		fix, derr := a.discardSlice(ctx, in, prefix, err)
		if derr != nil {
			return derr
		}
		return fatal(bakeapi.ErrCorruptPartial, "slice partial %s/ cannot be merged: %v; %s",
			uri(a.Store, prefix), err, fix)
	case errors.Is(err, store.ErrNotFound):
		if done, err := a.mergedMeanwhile(ctx, in); err != nil || done {
			return cmp.Or(err, errMergedMeanwhile)
		}
		return goneDir(a.Store, prefix, in.BakeID)
	default:
		return storeErr(err)
	}
}

// discardSlice drops the commit of the slice partial at prefix, which
// failed its check with cause: logged, counted in
// whestbake_damaged_objects_total and deleted, so that the slice commits it again at the bake's restart,
// and a merge never takes it in between. It returns what to do about it,
// for the merge's failure.
func (a *Activities) discardSlice(
	ctx context.Context,
	in bakeapi.MergeSplitInput,
	prefix string,
	cause error,
) (fix string, err error) {
	if done, err := a.mergedMeanwhile(ctx, in); err != nil || done {
		return "", cmp.Or(err, errMergedMeanwhile)
	}
	key := keys.Manifest(prefix)
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("damaged object discarded; its slice commits it again",
			"Key", key, "Error", cause)
	}
	a.Metrics.Damaged()
	if err := a.Store.Delete(ctx, key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", storeErr(err)
	}
	return fmt.Sprintf(
		"its commit %s was discarded, and nothing was merged from it: %s, "+
			"whose BakeSlice commits the slice again from its per-MLP results "+
			"(or computes them, if they are gone too)",
		uri(a.Store, key),
		restart(in.BakeID),
	), nil
}

// mergedMeanwhile reports whether in's split is merged, its merged split
// or the bake's dataset committed, as another attempt of this merge may
// have done while this one ran.
func (a *Activities) mergedMeanwhile(ctx context.Context, in bakeapi.MergeSplitInput) (bool, error) {
	b := keys.Bake(in.BakeID)
	for _, c := range []struct {
		prefix string
		id     seal.Seal
	}{
		{b.Merged(in.Split), seal.Seal{Bake: in.BakeID, Split: in.Split}},
		{b.Dataset(), seal.Seal{Bake: in.BakeID}},
	} {
		_, _, done, err := committed(ctx, a.Store, c.prefix, c.id)
		if err != nil && !damaged(err) {
			return false, err
		}
		if done {
			return true, nil
		}
	}
	return false, nil
}
