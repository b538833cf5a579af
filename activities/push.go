package activities

import (
	"bytes"
	"context"
	"errors"
	"path"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// Push copies the dataset to the release location, files first and the
// manifest last, all create-only: a release is immutable. Re-pushing the same
// content is a no-op; different content at the same tag is refused.
func (a *Activities) Push(ctx context.Context, in bakeapi.PushInput) (bakeapi.PushOutput, error) {
	dest, err := a.Store.WithBucket(ctx, in.Bucket)
	if err != nil {
		return bakeapi.PushOutput{}, storeErr(err)
	}
	relPrefix := keys.Release(in.Prefix, in.Name, in.Tag)
	out := bakeapi.PushOutput{URI: keys.ReleaseURI(in.Bucket, in.Prefix, in.Name, in.Tag)}
	// The starter refuses such a release, but not one started by an older
	// release of it: never write into a bake's folder.
	if keys.InWorkArea(relPrefix) {
		return out, fatal(bakeapi.ErrInvalidConfig, "release %s lies inside bakes/, where every bake keeps its working objects: choose a release.prefix outside bakes/ and start the bake again", out.URI)
	}
	// Step 1. The dataset's manifest, an intact commit, decides what the release is.
	m, src, err := manifest.ReadCommit(ctx, a.Store, in.DatasetPrefix, seal.Seal{})
	if damaged(err) {
		return out, lost(err)
	}
	if err != nil {
		return out, storeErr(err)
	}
	out.ManifestSHA256 = store.SHA256Hex(src)
	// Step 2. A release at this tag already: the same one is fine, another is a conflict.
	if existing, err := dest.Get(ctx, keys.Manifest(relPrefix)); err == nil {
		if !bytes.Equal(existing, src) {
			return out, fatal(bakeapi.ErrDestinationConflict, "%s is already released with different content (manifest sha256 %s, this bake %s); choose another tag",
				out.URI, store.SHA256Hex(existing), out.ManifestSHA256)
		}
		return out, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return out, storeErr(err)
	}
	// Step 3. Files create-only, streamed from the dataset (checked against the
	// manifest on the way, so memory stays at a buffer whatever their size);
	// a file left by an interrupted push must match.
	for _, f := range m.Files {
		key := path.Join(relPrefix, f.Path)
		err := dest.CopyCreate(ctx, key, a.Store, path.Join(in.DatasetPrefix, f.Path), f.SHA256)
		switch {
		case errors.Is(err, store.ErrExists):
			info, err := dest.Stat(ctx, key)
			if err != nil {
				return out, storeErr(err)
			}
			if info.SHA256 != f.SHA256 {
				return out, fatal(bakeapi.ErrDestinationConflict, "%s already holds a different %s; choose another tag", out.URI, f.Path)
			}
		case errors.Is(err, store.ErrCorrupt):
			// Bytes that differ from a correctly recorded object were damaged
			// in transit, and the next attempt may read them whole; an object
			// recorded with another sha256 than the manifest's never will.
			if info, serr := a.Store.Stat(ctx, path.Join(in.DatasetPrefix, f.Path)); serr == nil && info.SHA256 != f.SHA256 {
				return out, fatal(bakeapi.ErrCorruptPartial, "%s/%s does not match its manifest: %v", in.DatasetPrefix, f.Path, err)
			}
			return out, err
		case err != nil:
			return out, storeErr(err)
		}
		activityHeartbeat(ctx, f.Path)
	}
	// Step 4. The manifest makes the release visible.
	if err := dest.PutCreate(ctx, keys.Manifest(relPrefix), src); err != nil && !errors.Is(err, store.ErrExists) {
		return out, storeErr(err)
	}
	return out, nil
}
