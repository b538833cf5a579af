//go:build !linux

package staging

import (
	"errors"
	"io/fs"
	"os"
)

// Swap puts the folder staged in place of final, leaving the old one at
// staged. swapRenames leaves final absent for an instant.
func Swap(staged, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(staged, final)
	}
	return swapRenames(staged, final)
}
