package dataset

import (
	"os"
	"runtime"
	"strings"

	"github.com/whestbake/whestbake/internal/hostinfo"
)

// Hardware is the host fingerprint recorded in metadata. It is informational,
// never validated, and mirrors whestbench's hardware block with Go in place
// of the Python and numpy versions.
type Hardware struct {
	Hostname        string
	OS              string // like Python's platform.system(): "Linux", "Darwin"
	OSRelease       string // kernel release, like uname -r
	Platform        string
	Machine         string // like platform.machine(): "x86_64", "aarch64"
	CPUBrand        string
	CPUCountLogical int
	RAMTotalBytes   int64 // 0 when unknown; written as null
	GoVersion       string
}

// Object renders h in the metadata key order.
func (h Hardware) Object() *Object {
	var ram any
	if h.RAMTotalBytes > 0 {
		ram = h.RAMTotalBytes
	}
	return NewObject().
		Set("hostname", h.Hostname).
		Set("os", h.OS).
		Set("os_release", h.OSRelease).
		Set("platform", h.Platform).
		Set("machine", h.Machine).
		Set("cpu_brand", h.CPUBrand).
		Set("cpu_count_logical", h.CPUCountLogical).
		Set("ram_total_bytes", ram).
		Set("go_version", h.GoVersion)
}

// HostHardware fingerprints the machine this process runs on. Probes that
// fail leave "unknown", or a null RAM size, rather than an error: the
// fingerprint must never stop a bake.
func HostHardware() Hardware {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	h := Hardware{
		Hostname:        host,
		OS:              pythonSystemName(runtime.GOOS),
		OSRelease:       readFirstLine("/proc/sys/kernel/osrelease"),
		Machine:         pythonMachineName(runtime.GOOS, runtime.GOARCH),
		CPUBrand:        unknownIfEmpty(hostinfo.CPUBrand()),
		CPUCountLogical: runtime.NumCPU(),
		GoVersion:       runtime.Version(),
	}
	h.RAMTotalBytes = hostinfo.MemTotalBytes()
	h.Platform = h.OS + "-" + h.OSRelease + "-" + h.Machine
	return h
}

func pythonSystemName(goos string) string {
	switch goos {
	case "linux":
		return "Linux"
	case "darwin":
		return "Darwin"
	case "windows":
		return "Windows"
	case "freebsd":
		return "FreeBSD"
	}
	return goos
}

func pythonMachineName(goos, goarch string) string {
	switch {
	case goarch == "amd64":
		return "x86_64"
	case goarch == "arm64" && goos == "linux":
		return "aarch64"
	}
	return goarch
}

func readFirstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "unknown"
	}
	return line
}

func unknownIfEmpty(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
