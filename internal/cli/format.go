package cli

import (
	"io/fs"
	"path/filepath"
	"time"

	"github.com/whestbake/whestbake/internal/bakeclient"
)

// formatDuration prints durations the way whestbench's CLI does.
func formatDuration(d time.Duration) string { return bakeclient.FormatDuration(d) }

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, e := d.Info(); e == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
