package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/keys"
	"github.com/whestbake/whestbake/store"
)

// Manifest lists a dataset directory's files with their sha256s. It is the
// commit marker of a directory in the store: written last, create-only.
type Manifest struct {
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one file of a Manifest, by path relative to the directory.
type ManifestFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// File returns the entry for rel, if any.
func (m Manifest) File(rel string) (ManifestFile, bool) {
	for _, f := range m.Files {
		if f.Path == rel {
			return f, true
		}
	}
	return ManifestFile{}, false
}

// uploadDir puts every file under dir at prefix/<rel> (overwrites are safe: the
// directory's content is a pure function of the inputs, except for timestamps in
// metadata.json, and the manifest written afterwards decides which copy counts),
// and returns the manifest.
func uploadDir(ctx context.Context, s *store.Store, dir, prefix string) (Manifest, error) {
	var m Manifest
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		sum, err := store.FileSHA256(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := s.PutFile(ctx, path.Join(prefix, rel), p); err != nil {
			return storeErr(err)
		}
		m.Files = append(m.Files, ManifestFile{Path: rel, SHA256: sum, Size: info.Size()})
		return nil
	})
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	return m, err
}

// commitDir uploads dir and then its manifest, create-only. If another attempt
// committed first, its manifest wins and is returned.
func commitDir(ctx context.Context, s *store.Store, dir, prefix string) (Manifest, string, error) {
	m, err := uploadDir(ctx, s, dir, prefix)
	if err != nil {
		return Manifest{}, "", err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, "", err
	}
	if err := s.PutCreate(ctx, keys.Manifest(prefix), data); err != nil && !isExists(err) {
		return Manifest{}, "", storeErr(err)
	}
	return readManifest(ctx, s, prefix)
}

// readManifest returns a committed directory's manifest and the manifest's sha256,
// or store.ErrNotFound.
func readManifest(ctx context.Context, s *store.Store, prefix string) (Manifest, string, error) {
	data, err := s.Get(ctx, keys.Manifest(prefix))
	if err != nil {
		return Manifest{}, "", err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, "", fatal(ErrCorruptPartial, "%s: manifest is not valid JSON: %v", keys.Manifest(prefix), err)
	}
	return m, store.SHA256Hex(data), nil
}

// downloadDir fetches a committed directory into dir and checks every sha256.
func downloadDir(ctx context.Context, s *store.Store, prefix, dir string) (Manifest, error) {
	m, _, err := readManifest(ctx, s, prefix)
	if err != nil {
		return Manifest{}, storeErr(err)
	}
	for _, f := range m.Files {
		if strings.Contains(f.Path, "..") || path.IsAbs(f.Path) {
			return Manifest{}, fatal(ErrCorruptPartial, "%s: manifest names %q outside the directory", prefix, f.Path)
		}
		local := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return Manifest{}, err
		}
		if err := s.GetFile(ctx, path.Join(prefix, f.Path), local); err != nil {
			return Manifest{}, storeErr(err)
		}
		sum, err := store.FileSHA256(local)
		if err != nil {
			return Manifest{}, err
		}
		if sum != f.SHA256 {
			return Manifest{}, fmt.Errorf("%s/%s: sha256 %s, manifest says %s (retrying the download)", prefix, f.Path, sum, f.SHA256)
		}
	}
	return m, nil
}

func isExists(err error) bool { return errors.Is(err, store.ErrExists) }

// downloadAll fetches committed directories into dir/<i> (in order) and returns
// the local paths; a directory that was never committed is a corrupt input.
func downloadAll(ctx context.Context, s *store.Store, prefixes []string, dir string) ([]string, error) {
	var out []string
	for i, p := range prefixes {
		local := filepath.Join(dir, fmt.Sprintf("%05d", i))
		if _, err := downloadDir(ctx, s, p, local); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, fatal(ErrCorruptPartial, "%s has no manifest: it was never committed", p)
			}
			return nil, err
		}
		out = append(out, local)
	}
	return out, nil
}

// datasetErr marks a dataset the dataset package rejects as permanently corrupt.
func datasetErr(err error) error {
	var inv *dataset.InvalidDatasetError
	if errors.As(err, &inv) {
		return fatal(ErrCorruptPartial, "%v", err)
	}
	return err
}
