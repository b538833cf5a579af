// Package manifest is the file list of a dataset directory in the store: each
// file's path, sha256 and size. A directory counts as committed once its
// manifest exists, as it is written last, create-only; readers fetch through
// it and trust nothing it does not vouch for. The manifest itself is sealed
// by package seal for the bake that committed it, so a bake takes only its
// own intact commits for its own.
package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// Manifest lists a directory's files, sorted by path.
type Manifest struct {
	Files []File `json:"files"`
	// Seal names the bake and split that committed the directory, at
	// which key, with the manifest's own checksum. Releases of a whestbake
	// that sealed no manifest have none, and are still read.
	Seal seal.Seal `json:"seal"`
}

// File is one file of a Manifest, by path relative to the directory.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Errors of Read and Fetch besides the store's own, such as store.ErrNotFound
// when the directory was never committed.
var (
	ErrMalformed  = errors.New("manifest.json is not a file list")
	ErrUnsafePath = errors.New("manifest names a file outside its directory")
	ErrMismatch   = errors.New("file does not match manifest.json")
)

// MissingError is Fetch's error for a file that the manifest lists and the
// bucket does not hold, though the manifest, written last, says that its
// directory was complete.
type MissingError struct {
	Manifest, Key, Bucket string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s lists %s, which bucket %s does not hold", e.Manifest, e.Key, e.Bucket)
}

// Encode is m's JSON, indented, sealed for id, whose Key is the manifest's key.
func Encode(m Manifest, id seal.Seal) ([]byte, error) {
	data, err := seal.Marshal(&m, &m.Seal, id)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = json.Indent(&out, data, "", "  ")
	return out.Bytes(), err
}

// MaxBytes bounds a manifest.json that is read. A dataset directory holds a
// handful of files per split, a shard and prepared Arrow files, plus the
// card, metadata and report, about 150 bytes of JSON each: 4 MiB is some
// 25,000 files, far beyond any directory whestbake writes, while a manifest
// anyone with write access to the bucket made costs a reader at most a few
// times that in memory. A 200 MB one took 685 MB.
const MaxBytes = 4 << 20

// Read returns the manifest of a release, or of any directory, at prefix
// and its raw bytes. A sealed manifest must be intact; one without a seal
// is taken as it is, since releases of a whestbake that sealed no manifest
// have none. A manifest over MaxBytes, or one whose paths fail CleanPaths,
// is ErrMalformed; the paths returned are in their one spelling.
func Read(ctx context.Context, s *store.Store, prefix string) (Manifest, []byte, error) {
	key := keys.Manifest(prefix)
	data, err := s.GetMax(ctx, key, MaxBytes)
	if errors.Is(err, store.ErrTooLarge) {
		return Manifest{}, nil, fmt.Errorf(
			"%w: %s is over %d bytes (manifest.MaxBytes), far more than any dataset's file list",
			ErrMalformed,
			key,
			MaxBytes,
		)
	}
	if err != nil {
		return Manifest{}, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, nil, fmt.Errorf("%w: %s: %v", ErrMalformed, key, err)
	}
	if m.Seal.SHA256 != "" {
		if err := seal.Unmarshal(key, data, &m, &m.Seal, seal.Seal{}); err != nil {
			return Manifest{}, nil, err
		}
	}
	if err := checkFiles(key, &m); err != nil {
		return Manifest{}, nil, err
	}
	return m, data, nil
}

// ReadCommit returns the manifest of a directory a bake committed, and its
// raw bytes: it must be sealed, intact and written for id, as
// store.GetSealed checks, or the error wraps seal.ErrDamaged. It is
// store.ErrNotFound when there is none.
func ReadCommit(
	ctx context.Context,
	s *store.Store,
	prefix string,
	id seal.Seal,
) (Manifest, []byte, error) {
	var m Manifest
	data, err := s.GetSealed(ctx, keys.Manifest(prefix), &m, &m.Seal, id)
	if err != nil {
		return Manifest{}, nil, err
	}
	if err := checkFiles(keys.Manifest(prefix), &m); err != nil {
		return Manifest{}, nil, err
	}
	return m, data, nil
}

// checkFiles puts every path of m in its one spelling with CleanPaths and
// refuses a negative size.
func checkFiles(key string, m *Manifest) error {
	if err := CleanPaths(key, m.Files); err != nil {
		return err
	}
	for _, f := range m.Files {
		if f.Size < 0 {
			return fmt.Errorf("%w: %s gives %q a size of %d bytes", ErrMalformed, key, f.Path, f.Size)
		}
	}
	return nil
}

// CleanPaths puts each path of files, read from the document named doc,
// in its one spelling by path.Clean, in which "./a" and "b/../a" are "a".
// It then refuses, wrapping ErrMalformed, a list that names a file twice,
// whose bytes would be counted twice and written once, as a download of
// two files that writes one; a path that is empty, absolute or leaves its
// folder, wrapping ErrUnsafePath too; or a file that another's path takes
// for a folder. Every list of paths whestbake reads from a document it did
// not write this moment goes through it before any path is used.
func CleanPaths(doc string, files []File) error {
	seen := make(map[string]bool, len(files))
	for i, f := range files {
		clean := path.Clean(f.Path)
		if f.Path == "" || clean == "." || !filepath.IsLocal(filepath.FromSlash(clean)) {
			return fmt.Errorf("%w: %w: %s names %q", ErrMalformed, ErrUnsafePath, doc, f.Path)
		}
		if seen[clean] {
			return fmt.Errorf("%w: %s lists %q twice (as %q)", ErrMalformed, doc, clean, f.Path)
		}
		seen[clean] = true
		files[i].Path = clean
	}
	for _, f := range files {
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if seen[dir] {
				return fmt.Errorf("%w: %s lists %q as a file and as the folder of %q",
					ErrMalformed, doc, dir, f.Path)
			}
		}
	}
	return nil
}

// Fetch copies every file of m from prefix into dir and checks each one's
// sha256 and size against m. A file that does not match is read once more,
// since damage in transit does not repeat; a second mismatch is an error
// wrapping ErrMismatch: the stored bytes are not the manifest's. An object
// larger than its entry is not copied beyond the entry's size + 1 byte.
func Fetch(ctx context.Context, s *store.Store, prefix string, m Manifest, dir string) error {
	for _, f := range m.Files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%w: %s names %q", ErrUnsafePath, keys.Manifest(prefix), f.Path)
		}
		local := filepath.Join(dir, rel)
		for read := 1; ; read++ {
			err := fetchFile(ctx, s, prefix, f, local)
			if err == nil {
				break
			}
			if read == 2 || !errors.Is(err, ErrMismatch) {
				return err
			}
		}
	}
	return nil
}

// fetchFile downloads file f of the directory at prefix to local and checks it.
func fetchFile(ctx context.Context, s *store.Store, prefix string, f File, local string) error {
	got, err := s.GetFile(ctx, path.Join(prefix, f.Path), local, f.Size)
	if errors.Is(err, store.ErrTooLarge) {
		return fmt.Errorf(
			"%w: %s/%s is larger than the %d bytes the manifest says (%w)",
			ErrMismatch,
			prefix,
			f.Path,
			f.Size,
			err,
		)
	}
	if errors.Is(err, store.ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrMismatch, err)
	}
	if errors.Is(err, store.ErrNotFound) {
		return &MissingError{
			Manifest: keys.Manifest(prefix),
			Key:      path.Join(prefix, f.Path),
			Bucket:   s.Bucket(),
		}
	}
	if err != nil {
		return err
	}
	if got.SHA256 != f.SHA256 || got.Size != f.Size {
		return fmt.Errorf("%w: %s/%s has sha256 %s and %d bytes, the manifest says %s and %d bytes",
			ErrMismatch, prefix, f.Path, got.SHA256, got.Size, f.SHA256, f.Size)
	}
	return nil
}
