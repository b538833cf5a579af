// Package bytesize writes a size in binary units, the one way whestbake
// shows sizes to people: in the CLI, the worker's log and the config.
package bytesize

import "fmt"

// Format writes n in binary units, where 1 KB is 1024 B.
func Format(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "KB", "MB", "GB", "TB"} {
		if v < 1024 {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return fmt.Sprintf("%.1f %s", v, u)
		}
		v /= 1024
	}
	return fmt.Sprintf("%.1f PB", v)
}
