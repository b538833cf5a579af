//go:build !linux

package dataset

import (
	"errors"
	"io/fs"
	"os"
)

// swap puts the folder staged in place of final, leaving the old one at
// staged (swapRenames: the report is absent for an instant).
func swap(staged, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(staged, final)
	}
	return swapRenames(staged, final)
}
