// Package readlimit reads the small files a user names, such as a config
// file, a token file or a PEM bundle, with a cap on their size. A path may
// name anything: /dev/zero, a FIFO, a log or a disk image given by mistake.
// Read whole with os.ReadFile, /dev/zero never ends and fills memory, and a
// large file costs several times its size; read through File, any of them
// costs at most the cap, and fails at once with the cap in the message.
package readlimit

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError is a file over File's cap.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s, the most whestbake reads of such a file: "+
		"name the right file", Size(e.Limit))
}

// File reads the file at path whole, refusing one of more than limit bytes
// with a *TooLargeError. A regular file is refused by its size before any
// byte is read; anything else, a device or a FIFO, after limit+1 bytes.
func File(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// Size spells a cap: whole MiB or KiB where it is one, else bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
