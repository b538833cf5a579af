// Package manifest is the file list of a dataset directory in the store: each
// file's path, sha256 and size. A directory counts as committed once its
// manifest exists (it is written last, create-only); readers fetch through it
// and trust nothing it does not vouch for.
package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
)

// Manifest lists a directory's files, sorted by path.
type Manifest struct {
	Files []File `json:"files"`
}

// File is one file of a Manifest, by path relative to the directory.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Errors of Read and Fetch besides the store's own (store.ErrNotFound when the
// directory was never committed).
var (
	ErrMalformed  = errors.New("manifest.json is not a file list")
	ErrUnsafePath = errors.New("manifest names a file outside its directory")
	ErrMismatch   = errors.New("file does not match manifest.json")
)

// MaxBytes bounds a manifest.json that is read. A dataset directory holds a
// handful of files per split (a shard, prepared Arrow files) plus the card,
// metadata and report, about 150 bytes of JSON each: 4 MiB is some 25,000
// files, far beyond any directory whestbake writes, while a manifest
// anyone with write access to the bucket made costs a reader at most a few
// times that in memory (a 200 MB one took 685 MB).
const MaxBytes = 4 << 20

// Read returns the manifest of the directory at prefix and its raw bytes.
// A manifest over MaxBytes, or one that lists a path twice (its files
// would be counted twice), is ErrMalformed.
func Read(ctx context.Context, s *store.Store, prefix string) (Manifest, []byte, error) {
	key := keys.Manifest(prefix)
	data, err := s.GetMax(ctx, key, MaxBytes)
	if errors.Is(err, store.ErrTooLarge) {
		return Manifest{}, nil, fmt.Errorf("%w: %s is over %d bytes (manifest.MaxBytes), far more than any dataset's file list", ErrMalformed, key, MaxBytes)
	}
	if err != nil {
		return Manifest{}, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, nil, fmt.Errorf("%w: %s: %v", ErrMalformed, key, err)
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		switch {
		case seen[f.Path]:
			return Manifest{}, nil, fmt.Errorf("%w: %s lists %q twice", ErrMalformed, key, f.Path)
		case f.Size < 0:
			return Manifest{}, nil, fmt.Errorf("%w: %s gives %q a size of %d bytes", ErrMalformed, key, f.Path, f.Size)
		}
		seen[f.Path] = true
	}
	return m, data, nil
}

// Fetch copies every file of m from prefix into dir and checks each one's
// sha256 and size against m; an object larger than its entry is not
// copied beyond the entry's size + 1 byte.
func Fetch(ctx context.Context, s *store.Store, prefix string, m Manifest, dir string) error {
	for _, f := range m.Files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%w: %s names %q", ErrUnsafePath, keys.Manifest(prefix), f.Path)
		}
		local := filepath.Join(dir, rel)
		got, err := s.GetFile(ctx, path.Join(prefix, f.Path), local, f.Size)
		if errors.Is(err, store.ErrTooLarge) {
			return fmt.Errorf("%w: %s/%s is larger than the %d bytes the manifest says (%w)", ErrMismatch, prefix, f.Path, f.Size, err)
		}
		if err != nil {
			return err
		}
		if got.SHA256 != f.SHA256 || got.Size != f.Size {
			return fmt.Errorf("%w: %s/%s has sha256 %s and %d bytes, the manifest says %s and %d bytes",
				ErrMismatch, prefix, f.Path, got.SHA256, got.Size, f.SHA256, f.Size)
		}
	}
	return nil
}
