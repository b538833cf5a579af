// Package staging is how dataset's writers put files in place so that
// readers see them whole or not at all: a new file is created exclusively
// and synced before it counts, a replaced file is renamed over the old one,
// a folder is exchanged with its replacement at once by Swap, and the
// staging folders an interrupted run left are removed before a new one.
package staging

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteNew creates path, which must not exist, with data, and syncs it.
func WriteNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Replace writes data beside path and renames it over path.
func Replace(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// RemoveLeftovers removes the staging folders named prefix* in dir that an
// interrupted run left: nothing else writes them.
func RemoveLeftovers(dir, prefix string) error {
	stale, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if err != nil {
		return err
	}
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("dataset: removing %s, left by an interrupted run: %w", s, err)
		}
	}
	return nil
}
