package staging

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Swap puts the folder staged in place of final: with renameat2's
// RENAME_EXCHANGE when final exists, so a reader sees the old folder or the
// new one and never none, leaving the old one at staged. Filesystems
// without the flag get swapRenames.
func Swap(staged, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(staged, final)
	}
	err := unix.Renameat2(unix.AT_FDCWD, staged, unix.AT_FDCWD, final, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return swapRenames(staged, final)
	}
	return err
}
