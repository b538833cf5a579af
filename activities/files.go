package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// uploadDir puts every file under dir at prefix/<rel> (overwrites are safe: the
// directory's content is a pure function of the inputs, except for timestamps in
// metadata.json, and the manifest written afterwards decides which copy counts),
// and returns the manifest. The files placed lists are at their keys
// already (copied there on the server and checked, written there while
// they were made): they are listed as placed says and not sent, and a local
// copy of one must have its size.
func uploadDir(
	ctx context.Context,
	s *store.Store,
	dir, prefix string,
	placed map[string]manifest.File,
) (manifest.Manifest, error) {
	var m manifest.Manifest
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if f, ok := placed[rel]; ok {
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Size() != f.Size {
				return fmt.Errorf("%s holds %d bytes, but the copy at %s/%s %d",
					p, info.Size(), prefix, rel, f.Size)
			}
			return nil
		}
		// One read hashes the file, one sends it.
		info, err := s.PutFile(ctx, path.Join(prefix, rel), p)
		if err != nil {
			return storeErr(err)
		}
		m.Files = append(m.Files, manifest.File{Path: rel, SHA256: info.SHA256, Size: info.Size})
		return nil
	})
	for _, f := range placed {
		m.Files = append(m.Files, f)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	return m, err
}

// commit is a local directory that commitDir commits.
type commit struct {
	dir, prefix string
	// id is the bake and split committing it: the manifest's seal.
	id seal.Seal
	// placed lists files that are at their keys already, for uploadDir.
	placed map[string]manifest.File
	// vouch, if not nil, runs once the files are up and before the
	// manifest, with the sha256 of the manifest about to be written: what
	// it records about that commit exists before the commit does.
	vouch func(manifestSHA256 string) error
}

// commitDir uploads c.dir (but the files c.placed lists, uploadDir) and
// then its manifest, sealed for c.id, create-only. If another attempt
// committed first, its manifest wins and is returned.
func commitDir(ctx context.Context, s *store.Store, c commit) (manifest.Manifest, string, error) {
	m, err := uploadDir(ctx, s, c.dir, c.prefix, c.placed)
	if err != nil {
		return manifest.Manifest{}, "", err
	}
	id := c.id
	id.Key = keys.Manifest(c.prefix)
	data, err := manifest.Encode(m, id)
	if err != nil {
		return manifest.Manifest{}, "", err
	}
	if c.vouch != nil {
		if err := c.vouch(store.SHA256Hex(data)); err != nil {
			return manifest.Manifest{}, "", err
		}
	}
	switch err := s.PutCreate(ctx, id.Key, data); {
	case err == nil:
		return m, store.SHA256Hex(data), nil
	case isExists(err):
		m, sum, err := readManifest(ctx, s, c.prefix, id)
		if damaged(err) {
			return m, sum, lost(err)
		}
		return m, sum, err
	default:
		return manifest.Manifest{}, "", storeErr(err)
	}
}

// readManifest returns the manifest of a directory committed for id, and
// the manifest's sha256, or store.ErrNotFound. A manifest that is not an
// intact commit of id is an error for which damaged holds.
func readManifest(
	ctx context.Context,
	s *store.Store,
	prefix string,
	id seal.Seal,
) (manifest.Manifest, string, error) {
	m, data, err := manifest.ReadCommit(ctx, s, prefix, id)
	if err != nil {
		return m, "", err
	}
	return m, store.SHA256Hex(data), nil
}

// committed reports whether an earlier attempt committed prefix for id, with
// its manifest and the manifest's sha256. Every activity that writes a
// directory asks this first, which is what makes a retried or duplicated
// attempt free. A manifest that is not an intact commit of id is an error
// for which damaged holds: the caller recomputes the directory, or fails.
func committed(
	ctx context.Context,
	s *store.Store,
	prefix string,
	id seal.Seal,
) (manifest.Manifest, string, bool, error) {
	m, sum, err := readManifest(ctx, s, prefix, id)
	switch {
	case err == nil:
		return m, sum, true, nil
	case errors.Is(err, store.ErrNotFound):
		return m, "", false, nil
	case damaged(err):
		return m, "", false, err
	case errors.Is(err, seal.ErrOtherSpec):
		return m, "", false, fatal(
			bakeapi.ErrFingerprintMismatch,
			"%v: it is never reused; start the bake under a new --id",
			err,
		)
	default:
		return m, "", false, storeErr(err)
	}
}

// damaged reports whether err says that an object's bytes failed a check
// that reading them again will not pass: its seal, or the sha256 the store
// recorded. Such an object is discarded and recomputed where it can be
// (results, checkpoints, identity blocks, slice partials), and fails the
// activity for good where it cannot (lost).
func damaged(err error) bool {
	return errors.Is(err, seal.ErrDamaged) || errors.Is(err, store.ErrCorrupt) ||
		errors.Is(err, manifest.ErrMalformed)
}

// lost is the permanent failure of a damaged object that cannot be
// recomputed; err names the object.
func lost(err error) error {
	return fatal(
		bakeapi.ErrCorruptPartial,
		"%v: it cannot be recomputed, so nothing is published from it: "+
			"restore the object from a backup, or bake again under a new --id",
		err,
	)
}

// readCommitted reads the manifest of the directory committed at prefix
// for id, which a step that fetches it knows was committed, since the
// workflow runs it only after the step that committed it: a missing
// manifest was committed and is gone, and one that is not an intact commit
// of id fails for good, as reading the same bytes again cannot help.
func readCommitted(
	ctx context.Context,
	s *store.Store,
	prefix string,
	id seal.Seal,
) (manifest.Manifest, error) {
	m, _, err := readManifest(ctx, s, prefix, id)
	switch {
	case damaged(err):
		return m, lost(err)
	case errors.Is(err, store.ErrNotFound):
		return m, goneDir(s, prefix, id.Bake)
	case err != nil:
		return m, storeErr(err)
	}
	return m, nil
}

// fetchFiles fetches the files of m, the manifest of a directory bake
// bakeID committed ("": a bake the caller does not know), into dir and
// checks every file: a file unlike its manifest on a second read, or a
// manifest pointing outside its directory, fails for good, and a missing
// file was committed and is gone.
func fetchFiles(
	ctx context.Context,
	s *store.Store,
	prefix string,
	m manifest.Manifest,
	dir, bakeID string,
) error {
	var missing *manifest.MissingError
	switch err := manifest.Fetch(ctx, s, prefix, m, dir); {
	case errors.Is(err, manifest.ErrMismatch):
		return lost(err)
	case errors.Is(err, manifest.ErrUnsafePath):
		return fatal(bakeapi.ErrCorruptPartial, "%v", err)
	case errors.As(err, &missing):
		return goneFile(s, prefix, missing.Key, bakeID)
	default:
		return storeErr(err)
	}
}

// gone is the permanent failure of an object the bake committed that is no
// longer in the bucket (what names it and says how the bake knows it was
// committed). S3 reads its own writes, so no retry brings it back; and
// whestbake deletes what a bake committed only after the steps that read
// it, or with gc, which never runs beside the bake: something else deleted
// it. That is not an object that was never written, and says so.
func gone(what, fix string) error {
	return fatal(bakeapi.ErrCorruptPartial, "%s: something outside whestbake deleted it "+
		"(a lifecycle rule, an emptied or restored bucket, a delete by hand); %s", what, fix)
}

// goneDir is gone for the manifest of a committed directory: a restart of
// the bake commits the directory again from what is left of its inputs.
func goneDir(s *store.Store, prefix, bakeID string) error {
	return gone(
		fmt.Sprintf(
			"directory %s/ was committed before this step ran (the workflow runs it only then), "+
				"but its manifest.json is gone",
			uri(s, prefix),
		),
		restart(bakeID)+", which commits the directory again from what is left",
	)
}

// goneFile is gone for the file at key that a committed directory's
// manifest lists: the manifest still says the directory is complete, so a
// restart would take it as it is until the manifest goes too.
func goneFile(s *store.Store, prefix, key, bakeID string) error {
	return gone(
		goneFileText(s, prefix, key),
		fmt.Sprintf(
			"restore it, or delete %s and %s, which commits the directory again",
			uri(s, keys.Manifest(prefix)),
			restart(bakeID),
		),
	)
}

// goneFileText says that the file at key, which the manifest of the
// directory at prefix lists, is gone.
func goneFileText(s *store.Store, prefix, key string) string {
	return fmt.Sprintf(
		"%s was committed with its directory %s/ (whose manifest lists it), but it is gone",
		uri(s, key),
		uri(s, prefix),
	)
}

// restart says how to restart bake bakeID ("": one an activity does not
// know the ID of).
func restart(bakeID string) string {
	if bakeID == "" {
		return "restart the bake (`whestbake bake` with its config)"
	}
	return fmt.Sprintf("restart the bake with `whestbake bake --id %s`", bakeID)
}

// uri is the s3:// address of key, a key or a folder, in s's bucket.
func uri(s *store.Store, key string) string { return "s3://" + s.Bucket() + "/" + key }

func isExists(err error) bool { return errors.Is(err, store.ErrExists) }

// fetchInOrder yields local copies of the committed directories at
// prefixes, each fetched into a directory by fetchDir, in order, for a
// consumer that reads one at a time: up to
// downloaders are fetched ahead, and each copy is removed as soon as the
// consumer asks for the next, so the scratch space holds a few directories
// however many there are. The first failed fetch is yielded as an error and
// ends the sequence; fetches still running when it ends are cancelled and
// waited for, so nothing writes into dir after. A sequence that ctx ends
// yields ctx's error last: ended quietly, it would pass for every
// directory there is, and the merge of a cancelled attempt would fail for
// good with a gap in the split, CorruptPartial, failing the bake that was
// being cancelled.
//
// A directory not committed yet is waited for, in awaitDir, so that the
// sequence follows commits as they come: one at a time, in order, so that
// one request at a time asks, and the fetches ahead are of committed
// directories only.
func fetchInOrder(
	ctx context.Context,
	s *store.Store,
	prefixes []string,
	dir string,
	fetchDir func(ctx context.Context, prefix, dir string) error,
) iter.Seq2[string, error] {
	type fetch struct {
		path string
		done chan error
	}
	return func(yield func(string, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		ahead := make(chan fetch, downloaders-1)
		wg.Go(func() {
			defer close(ahead)
			for i, p := range prefixes {
				f := fetch{path: filepath.Join(dir, strconv.Itoa(i)), done: make(chan error, 1)}
				waited := awaitDir(ctx, s, p)
				select {
				case ahead <- f:
				case <-ctx.Done():
					return
				}
				if waited != nil {
					f.done <- waited
					return
				}
				wg.Go(func() { f.done <- fetchDir(ctx, p, f.path) })
			}
		})
		taken := 0
		for f := range ahead {
			if err := <-f.done; err != nil {
				yield("", err)
				return
			}
			taken++
			more := yield(f.path, nil)
			if err := os.RemoveAll(f.path); err != nil && more {
				yield("", err)
				return
			}
			if !more {
				return
			}
		}
		if taken < len(prefixes) {
			yield("", ctx.Err())
		}
	}
}

// awaitDir returns once the directory at prefix is committed (its manifest
// exists), asking every awaitPoll.First, then less often up to
// awaitPoll.Max, until ctx ends.
func awaitDir(ctx context.Context, s *store.Store, prefix string) error {
	wait := awaitPoll.First
	for {
		switch ok, err := s.Exists(ctx, keys.Manifest(prefix)); {
		case err != nil:
			return storeErr(err)
		case ok:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, awaitPoll.Max)
	}
}

// awaitPoll is how often awaitDir asks. The slice a merge waits for is
// asked about every second at most, so that the merge takes the last
// slice within a second of its commit, while 3,600 HEAD requests an hour
// per waiting merge cost S3 nothing to speak of (AWS bills 0.04 US cents a
// thousand: a day of waiting, 3.5 cents).
var awaitPoll = retryPolicy{First: 100 * time.Millisecond, Max: time.Second}

// downloaders bounds the fetches fetchInOrder runs ahead.
const downloaders = 8

// datasetErr marks a dataset the dataset package rejects as permanently corrupt.
func datasetErr(err error) error {
	var inv *dataset.InvalidDatasetError
	if errors.As(err, &inv) {
		return fatal(bakeapi.ErrCorruptPartial, "%v", err)
	}
	return err
}
