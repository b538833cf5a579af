package devstack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one server process to launch.
type proc struct {
	bin     string
	args    []string
	env     []string // added to this process's environment
	dir     string   // working directory
	logFile string
	pidFile string
}

// spawn starts p detached — in its own session, so it outlives the command
// that started it and a Ctrl-C in that terminal does not reach it — with
// output appended to its log. The channel reports the exit if it happens
// while this process lives; reaping it also keeps zombies from looking alive.
func spawn(p proc) (int, <-chan error, error) {
	for _, d := range []string{p.dir, filepath.Dir(p.logFile), filepath.Dir(p.pidFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, nil, fmt.Errorf("devstack: %w", err)
		}
	}
	logf, err := os.OpenFile(p.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, nil, fmt.Errorf("devstack: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n%s%s starting: %s %s\n",
		logStartMarker, time.Now().Format(time.RFC3339), p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("devstack: start %s: %w", p.bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid := cmd.Process.Pid
	if err := writeFileAtomic(p.pidFile, []byte(strconv.Itoa(pid)+"\n")); err != nil {
		_ = terminate(pid, time.Second)
		return 0, nil, fmt.Errorf("devstack: pid file: %w", err)
	}
	return pid, exited, nil
}

// livePID is the pid recorded in pidFile if that process still runs bin
// with the argument state, which names this stack's state directory;
// otherwise it removes the stale file and returns 0. Checking the binary
// keeps a reused pid from being mistaken for our server and killed as it,
// and checking state keeps a copy of the directory, whose pid files name
// the original's servers, from taking them for its own.
func livePID(pidFile, bin, state string) int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !alive(pid) || !runs(pid, bin, state) {
		os.Remove(pidFile)
		return 0
	}
	return pid
}

// runs reports whether pid's executable is bin and its arguments hold
// state, where procfs can tell.
func runs(pid int, bin, state string) bool {
	argv, ok := cmdline(pid)
	return !ok || filepath.Base(argv[0]) == filepath.Base(bin) && slices.Contains(argv[1:], state)
}

// alive reports whether pid is a process that has not exited; a zombie,
// exited and not yet reaped by a parent, counts as exited.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs, as on macOS: trust kill(0)
	}
	// The state letter follows the ") " that closes the command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// cmdline is pid's argument vector; ok is false where procfs cannot tell.
func cmdline(pid int) (argv []string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), true
}

// terminate sends SIGTERM to pid's process group, and SIGKILL if it is
// still there after timeout.
func terminate(pid int, timeout time.Duration) error {
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGTERM, timeout}, {syscall.SIGKILL, 5 * time.Second}} {
		if err := syscall.Kill(-pid, step.sig); errors.Is(err, syscall.ESRCH) {
			_ = syscall.Kill(pid, step.sig) // not a group leader after all
		}
		end := time.Now().Add(step.wait)
		for ; time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if !alive(pid) {
				return nil
			}
		}
	}
	return fmt.Errorf("devstack: pid %d is still running after SIGKILL", pid)
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// logStartMarker begins the line each start of a server adds to its log.
const logStartMarker = "=== "

// logTail is the last lines of a log file, for error messages about a
// server that failed to start.
func logTail(path string, lines int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return all
}
