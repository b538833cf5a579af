package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkScratch says why dir cannot hold the worker's temporary files: it
// must be a directory in which this process can create and remove a file.
func checkScratch(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return fmt.Errorf("cannot be examined (%v)", err)
	case !info.IsDir():
		return errors.New("is not a directory")
	}
	f, err := os.CreateTemp(dir, ".whestbake-probe-*")
	if err != nil {
		return fmt.Errorf("is not writable by this worker (%v)", err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return fmt.Errorf("is not writable by this worker (%v)", err)
	}
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("does not let this worker remove its files (%v)", err)
	}
	return nil
}
