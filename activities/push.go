package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

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
		return out, fatal(
			bakeapi.ErrInvalidConfig,
			"release %s lies inside bakes/, where every bake keeps its working objects: "+
				"choose a release.prefix outside bakes/ and start the bake again",
			out.URI,
		)
	}
	// Step 1. The dataset's manifest, an intact commit, decides what the release is.
	m, src, err := manifest.ReadCommit(ctx, a.Store, in.DatasetPrefix, seal.Seal{})
	switch {
	case damaged(err):
		return out, lost(err)
	case errors.Is(err, store.ErrNotFound): // CombineSplits committed it before Push ran
		return out, goneDir(a.Store, in.DatasetPrefix, "")
	case err != nil:
		return out, storeErr(err)
	}
	out.ManifestSHA256 = store.SHA256Hex(src)
	// Step 2. A release at this tag already: the same one is fine, another is a conflict.
	if existing, err := dest.Get(ctx, keys.Manifest(relPrefix)); err == nil {
		if !bytes.Equal(existing, src) {
			return out, fatal(
				bakeapi.ErrDestinationConflict,
				"%s is already released with different content (manifest sha256 %s, "+
					"this bake %s); choose another tag",
				out.URI,
				store.SHA256Hex(existing),
				out.ManifestSHA256,
			)
		}
		return out, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return out, storeErr(err)
	}
	// Step 3. Nothing is released whose prepared tree is not its parquet
	// files' (whestbench's loader reads the tree first): checked here
	// unless the bake checked it before committing this very manifest.
	if err := a.vouchedOrCheck(ctx, in.DatasetPrefix, m, out.ManifestSHA256); err != nil {
		return out, err
	}
	// Step 4. Files create-only, streamed from the dataset (checked against the
	// manifest on the way, so memory stays at a buffer whatever their size);
	// a file left by an interrupted push must match.
	for _, f := range m.Files {
		key := path.Join(relPrefix, f.Path)
		srcKey := path.Join(in.DatasetPrefix, f.Path)
		copyFile := func(ctx context.Context, progress func(CopyProgress)) error {
			return a.copyReleaseFile(ctx, dest, key, srcKey, f, progress)
		}
		copyOnce := func() error {
			return retryCopy(ctx, f.Path, f.Size, func() error {
				return watchCopy(ctx, f.Path, f.Size, copyFile)
			})
		}
		err := copyOnce()
		if errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrSourceChanged) {
			// Damage in transit does not repeat, nor does a source replaced
			// by a writer of the same bytes: read the file once more (a
			// refused copy left nothing at key). Bytes that differ again were
			// changed in the bucket after the dataset was committed, and a
			// retried attempt would read the same bytes: fail at once below.
			err = copyOnce()
		}
		switch {
		case errors.Is(err, store.ErrExists):
			info, err := dest.Stat(ctx, key)
			if err != nil {
				return out, storeErr(err)
			}
			if info.SHA256 != f.SHA256 {
				return out, fatal(
					bakeapi.ErrDestinationConflict,
					"%s already holds a different %s; choose another tag",
					out.URI,
					f.Path,
				)
			}
			// A copy on the server records the sha256 it was asked for
			// before its bytes are read back: one that an interrupted
			// attempt left unread proves nothing until it is read.
			switch err := dest.Check(ctx, key, f.SHA256, nil); {
			case errors.Is(err, store.ErrCorrupt):
				return out, fatal(
					bakeapi.ErrCorruptPartial,
					"%s%s was there before this push copied it (left by an earlier "+
						"attempt, or written by another writer of the release bucket), "+
						"and does not hold the bytes its recorded sha256 says: %v; "+
						"delete it and restart the bake, or choose another tag",
					out.URI,
					f.Path,
					err,
				)
			case err != nil:
				return out, storeErr(err)
			}
		case errors.Is(err, store.ErrCorrupt):
			return out, fatal(
				bakeapi.ErrCorruptPartial,
				"%s/%s does not match its manifest, read twice: %v",
				in.DatasetPrefix,
				f.Path,
				err,
			)
		case errors.Is(err, store.ErrSourceChanged):
			return out, fatal(
				bakeapi.ErrCorruptPartial,
				"%s was replaced in the bucket while it was copied, twice: %v; "+
					"something outside whestbake writes the bake's committed dataset, "+
					"and nothing was published from it: stop that writer, then %s "+
					"(its push checks the file against the manifest again)",
				uri(a.Store, srcKey),
				err,
				restart(""),
			)
		case errors.Is(err, store.ErrNotFound):
			return out, goneFile(a.Store, in.DatasetPrefix, srcKey, "")
		case err != nil:
			return out, storeErr(err)
		}
		activityHeartbeat(ctx, f.Path)
	}
	// Step 5. The manifest makes the release visible.
	if err := dest.PutCreate(ctx, keys.Manifest(relPrefix), src); err != nil &&
		!errors.Is(err, store.ErrExists) {
		return out, storeErr(err)
	}
	return out, nil
}

// serverCopyBytes is the size from which Push has S3 copy a release file
// on the server (store.ServerCopy: the bytes never leave the server on the
// way, and are read back once to prove them) instead of streaming it
// through the worker (a download and an upload). Below it the three
// requests of a server copy and the read cost about what the stream does.
// A variable so that tests reach both paths with small files.
var serverCopyBytes int64 = 16 << 20

// copyReleaseFile copies the dataset file f at srcKey to key in dest,
// create-only and checked against f's sha256, on the server where S3 can
// (same endpoint) and the file is large, else through this process.
func (a *Activities) copyReleaseFile(
	ctx context.Context,
	dest *store.Store,
	key, srcKey string,
	f manifest.File,
	progress func(CopyProgress),
) error {
	if f.Size >= serverCopyBytes {
		return dest.ServerCopy(ctx, store.ServerCopyInput{
			Key:        key,
			Src:        a.Store,
			SrcKey:     srcKey,
			SHA256:     f.SHA256,
			CreateOnly: true,
			Progress: func(copied, checked int64) {
				progress(CopyProgress{File: f.Path, Copied: copied, Checked: checked, Size: f.Size})
			},
		})
	}
	return dest.CopyCreate(ctx, key, a.Store, srcKey, f.SHA256, func(n int64) {
		progress(CopyProgress{File: f.Path, Copied: n, Size: f.Size})
	})
}

// CopyProgress is Push's heartbeat while it copies a file, or waits to try
// it again (Retry: the tries of it that failed so far, retryCopy). A copy
// on the server counts Copied as the server finishes parts, then Checked
// as the copy is read back.
type CopyProgress struct {
	File         string
	Copied, Size int64
	Checked      int64 `json:",omitempty"`
	Retry        int   `json:",omitempty"`
}

// errCopyStalled ends a copy that moved no byte for a heartbeat timeout.
var errCopyStalled = errors.New("starting it over")

// watchCopy runs copy (one file of a release, which may be a shard of
// hundreds of megabytes, or a file of gigabytes in a release made before
// splits were cut into shards) and heartbeats its progress every quarter of
// the heartbeat timeout while bytes move. A copy that moves no byte for a
// whole heartbeat timeout is stopped, as the server then gives the attempt
// up: the next attempt starts over (watchProgress).
func watchCopy(
	ctx context.Context,
	file string,
	size int64,
	copy func(ctx context.Context, progress func(CopyProgress)) error,
) error {
	watch := progressWatch[CopyProgress]{
		checks:    4,
		heartbeat: func(p CopyProgress) any { return p },
		stalled: func(p CopyProgress, timeout time.Duration) error {
			return fmt.Errorf(
				"copy of %s stopped moving at %d of %d bytes (%d checked) for %s "+
					"(the activity's heartbeat timeout): %w",
				file,
				p.Copied,
				size,
				p.Checked,
				timeout,
				errCopyStalled,
			)
		},
	}
	_, err := watchProgress(ctx, watch, func(ctx context.Context, report func(CopyProgress)) error {
		// A move is a byte copied or checked, not a call that repeats the
		// count; parts copied on the server report from several goroutines.
		var mu sync.Mutex
		var last CopyProgress
		return copy(ctx, func(p CopyProgress) {
			mu.Lock()
			defer mu.Unlock()
			if p != last {
				last = p
				report(p)
			}
		})
	})
	return err
}
