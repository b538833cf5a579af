package cli

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// formatDuration prints durations the way whestbench's CLI does.
func formatDuration(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 1:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%dh %dm %ds", int(s)/3600, int(s)%3600/60, int(s)%60)
}

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
