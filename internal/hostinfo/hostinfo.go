// Package hostinfo reads facts about the host from /proc for provenance: the
// dataset's hardware fingerprint and the engines' device names read the same
// values through it.
package hostinfo

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// MemTotalBytes is the host's memory, MemTotal of /proc/meminfo, or 0 where
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

// MemoryLimit is the memory this process may use: the cgroup's limit where
// one is set, memory.max in v2 or memory.limit_in_bytes in v1, else the
// machine's physical memory; 0 when neither can be read.
func MemoryLimit() int64 {
	phys := MemTotalBytes()
	for _, p := range []string{
		"/sys/fs/cgroup/memory.max",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "max" in v2 or a huge page-aligned number in v1 means no limit.
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (phys == 0 || n < phys) {
			return n
		}
	}
	return phys
}

// CPU identifies the host's processor as far as the speed of vector code
// depends on it. On x86 the family and model name the microarchitecture; the
// model name may not, since hypervisors mask it: KVM shows "AMD EPYC" for
// every EPYC generation.
type CPU struct {
	Vendor    string // vendor_id: GenuineIntel, AuthenticAMD; "" where there is none
	Family    int    // "cpu family"; 0 where there is none, never on x86
	Model     int    // "model"
	ModelName string // "model name"
}

// ReadCPU reads the host's CPU from /proc/cpuinfo, the zero CPU where it
// cannot be read.
func ReadCPU() CPU { return ParseCPU("/proc/cpuinfo") }

// ParseCPU reads a CPU from a file in /proc/cpuinfo's format: the values of
// its first processor.
func ParseCPU(path string) CPU {
	num := func(key string) int {
		n, err := strconv.Atoi(ProcField(path, key))
		if err != nil {
			return 0
		}
		return n
	}
	return CPU{
		Vendor:    ProcField(path, "vendor_id"),
		Family:    num("cpu family"),
		Model:     num("model"),
		ModelName: ProcField(path, "model name"),
	}
}

// DiskFree is the space an unprivileged process may still write on the
// file system that holds dir: statfs's available blocks, root's reserve
// left out.
func DiskFree(dir string) (int64, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, err
	}
	return int64(fs.Bavail) * int64(fs.Bsize), nil
}
