package settings

import (
	"cmp"
	"os"
)

// Scratch is the directory the worker writes its temporary files in:
// worker.scratch-dir, or the system's temporary directory when it is unset.
// Whether it takes files is the preflight step's question, asked when the
// worker starts.
func (w Worker) Scratch() string { return cmp.Or(w.ScratchDir, os.TempDir()) }
