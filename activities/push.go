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
	p, err := a.newPush(ctx, in)
	if err != nil {
		return p.out, err
	}
	m, src, err := p.manifest(ctx)
	if err != nil {
		return p.out, err
	}
	if done, err := p.released(ctx, src); done || err != nil {
		return p.out, err
	}
	// Nothing is released whose prepared tree is not its parquet files':
	// whestbench's loader reads the tree first. The bake may have checked
	// it before committing this very manifest.
	if err := a.vouchedOrCheck(ctx, in.DatasetPrefix, m, p.out.ManifestSHA256); err != nil {
		return p.out, err
	}
	for _, f := range m.Files {
		if err := p.file(ctx, f); err != nil {
			return p.out, err
		}
		activityHeartbeat(ctx, f.Path)
	}
	// The manifest makes the release visible.
	if err := p.dest.PutCreate(ctx, keys.Manifest(p.prefix), src); err != nil &&
		!errors.Is(err, store.ErrExists) {
		return p.out, storeErr(err)
	}
	return p.out, nil
}

// push is one attempt of Push, a method a step: where the release goes,
// the dataset's manifest, a release already at the tag, each file.
type push struct {
	a      *Activities
	in     bakeapi.PushInput
	dest   *store.Store
	prefix string // the release's folder in dest
	out    bakeapi.PushOutput
}

// newPush opens the release bucket and refuses a release inside bakes/.
// The starter refuses such a release too, but a bake started by an older
// starter may ask for one: a release never writes into a bake's folder.
func (a *Activities) newPush(ctx context.Context, in bakeapi.PushInput) (*push, error) {
	p := &push{
		a:      a,
		in:     in,
		prefix: keys.Release(in.Prefix, in.Name, in.Tag),
		out:    bakeapi.PushOutput{URI: keys.ReleaseURI(in.Bucket, in.Prefix, in.Name, in.Tag)},
	}
	dest, err := a.Store.WithBucket(ctx, in.Bucket)
	if err != nil {
		return p, storeErr(err)
	}
	p.dest = dest
	if keys.InWorkArea(p.prefix) {
		return p, fatal(
			bakeapi.ErrInvalidConfig,
			"release %s lies inside bakes/, where every bake keeps its working objects: "+
				"choose a release.prefix outside bakes/ and start the bake again",
			p.out.URI,
		)
	}
	return p, nil
}

// manifest is the dataset's manifest, an intact commit, which decides
// what the release is, and its bytes.
func (p *push) manifest(ctx context.Context) (manifest.Manifest, []byte, error) {
	m, src, err := manifest.ReadCommit(ctx, p.a.Store, p.in.DatasetPrefix, seal.Seal{})
	switch {
	case damaged(err):
		return m, nil, lost(err)
	case errors.Is(err, store.ErrNotFound): // CombineSplits committed it before Push ran
		return m, nil, goneDir(p.a.Store, p.in.DatasetPrefix, "")
	case err != nil:
		return m, nil, storeErr(err)
	}
	p.out.ManifestSHA256 = store.SHA256Hex(src)
	return m, src, nil
}

// released reports whether the tag holds a release already: the same one
// is done, another one is a conflict.
func (p *push) released(ctx context.Context, src []byte) (bool, error) {
	existing, err := p.dest.Get(ctx, keys.Manifest(p.prefix))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, storeErr(err)
	case !bytes.Equal(existing, src):
		return true, fatal(
			bakeapi.ErrDestinationConflict,
			"%s is already released with different content (manifest sha256 %s, "+
				"this bake %s); choose another tag",
			p.out.URI,
			store.SHA256Hex(existing),
			p.out.ManifestSHA256,
		)
	}
	return true, nil
}

// file copies f create-only, streamed from the dataset and checked
// against the manifest on the way, so memory stays at a buffer whatever
// its size; a file an interrupted push left must match.
func (p *push) file(ctx context.Context, f manifest.File) error {
	key := path.Join(p.prefix, f.Path)
	srcKey := path.Join(p.in.DatasetPrefix, f.Path)
	copyFile := func(ctx context.Context, progress func(CopyProgress)) error {
		return p.a.copyReleaseFile(ctx, p.dest, key, srcKey, f, progress)
	}
	copyOnce := func() error {
		return retryCopy(ctx, f.Path, f.Size, func() error {
			return watchCopy(ctx, f.Path, f.Size, copyFile)
		})
	}
	err := copyOnce()
	if errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrSourceChanged) {
		// Damage in transit does not repeat, nor does a source replaced by a
		// writer of the same bytes: read the file once more, since a refused
		// copy left nothing at key. Bytes that differ again were changed in
		// the bucket after the dataset was committed, and a retried attempt
		// would read the same bytes: fail at once below.
		err = copyOnce()
	}
	switch {
	case errors.Is(err, store.ErrExists):
		return p.existing(ctx, key, f)
	case errors.Is(err, store.ErrCorrupt):
		return fatal(
			bakeapi.ErrCorruptPartial,
			"%s/%s does not match its manifest, read twice: %v",
			p.in.DatasetPrefix,
			f.Path,
			err,
		)
	case errors.Is(err, store.ErrSourceChanged):
		return fatal(
			bakeapi.ErrCorruptPartial,
			"%s was replaced in the bucket while it was copied, twice: %v; "+
				"something outside whestbake writes the bake's committed dataset, "+
				"and nothing was published from it: stop that writer, then %s "+
				"(its push checks the file against the manifest again)",
			uri(p.a.Store, srcKey),
			err,
			restart(""),
		)
	case errors.Is(err, store.ErrNotFound):
		return goneFile(p.a.Store, p.in.DatasetPrefix, srcKey, "")
	case err != nil:
		return storeErr(err)
	}
	return nil
}

// existing accepts the release file at key that was there before this
// attempt copied f, once it is read to hold f's bytes. A copy on the
// server records the sha256 it was asked for before its bytes are read
// back, so one that an interrupted attempt left unread proves nothing
// until it is read.
func (p *push) existing(ctx context.Context, key string, f manifest.File) error {
	info, err := p.dest.Stat(ctx, key)
	if err != nil {
		return storeErr(err)
	}
	if info.SHA256 != f.SHA256 {
		return fatal(
			bakeapi.ErrDestinationConflict,
			"%s already holds a different %s; choose another tag",
			p.out.URI,
			f.Path,
		)
	}
	switch err := p.dest.Check(ctx, key, f.SHA256, nil); {
	case errors.Is(err, store.ErrCorrupt):
		return fatal(
			bakeapi.ErrCorruptPartial,
			"%s%s was there before this push copied it (left by an earlier "+
				"attempt, or written by another writer of the release bucket), "+
				"and does not hold the bytes its recorded sha256 says: %v; "+
				"delete it and restart the bake, or choose another tag",
			p.out.URI,
			f.Path,
			err,
		)
	case err != nil:
		return storeErr(err)
	}
	return nil
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
