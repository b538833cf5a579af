package staging

import (
	"errors"
	"os"
)

// swapRenames exchanges two folders with three renames, for systems that
// cannot exchange them at once: between the second and the third, final
// does not exist.
func swapRenames(staged, final string) error {
	aside := staged + ".old"
	if err := os.Rename(final, aside); err != nil {
		return err
	}
	if err := os.Rename(staged, final); err != nil {
		if undo := os.Rename(aside, final); undo != nil {
			return errors.Join(err, undo)
		}
		return err
	}
	return os.Rename(aside, staged)
}
