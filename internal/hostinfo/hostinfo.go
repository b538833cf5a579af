// Package hostinfo reads facts about the host from /proc for provenance: the
// dataset's hardware fingerprint and the engines' device names read the same
// values through it.
package hostinfo

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// ProcField returns the value of the first "key : value" line of a /proc file
// such as /proc/cpuinfo, or "" when the file or the key is missing.
func ProcField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return ""
}

// MemTotalBytes is the host's memory (MemTotal of /proc/meminfo), or 0 where
// it cannot be read.
func MemTotalBytes() int64 {
	v := strings.TrimSuffix(ProcField("/proc/meminfo", "MemTotal"), " kB")
	kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// CPUBrand is the host CPU's model name, or "" where /proc/cpuinfo has none.
func CPUBrand() string { return ProcField("/proc/cpuinfo", "model name") }
