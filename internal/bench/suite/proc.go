package suite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/whestbake/whestbake/gpuengine"
)

// child is one finished child process: its output and what the kernel
// accounted to it.
type child struct {
	stdout []byte
	// peakRSS is the child's maximum resident set size in bytes, getrusage's
	// ru_maxrss of the waited-for process, the peak memory a user sees.
	peakRSS float64
}

// run runs bin with args in dir and the environment env, on top of this
// process's less any WHESTBAKE_* a developer has set, and fails with the
// tail of its stderr when it fails.
func run(ctx context.Context, dir string, env []string, bin string, args ...string) (child, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return child{}, fmt.Errorf("%s %s: %v%s",
			bin, strings.Join(args, " "), err, tail(stderr.String()))
	}
	return child{stdout: stdout.Bytes(), peakRSS: peakRSS(cmd.ProcessState)}, nil
}

// peakRSS reads ru_maxrss, which Linux reports in KiB.
func peakRSS(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024
	}
	return 0
}

// childEnv is the environment of every child: this process's without
// WHESTBAKE_*, as a developer's settings must not change the workload, plus env.
// The one exception is WHESTBAKE_CPU_KERNEL, gpuengine.CPUKernelEnv: a cap on
// the kernels' instruction set, which the gate records in its machine class,
// so the children must run the kernel the class names.
func childEnv(env []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WHESTBAKE_") ||
			strings.HasPrefix(kv, gpuengine.CPUKernelEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// tail is the last lines of a child's stderr, for an error message.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return ":\n  " + strings.Join(lines, "\n  ")
}
