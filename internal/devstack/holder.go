package devstack

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/whestbake/whestbake/internal/safetext"
)

// holder is a process that listens on a port of the stack.
type holder struct {
	PID     int    // 0: a process this user cannot see, another user's
	Command string // its command line, shortened
}

func (h holder) String() string {
	if h.PID == 0 {
		return "a process this user cannot see"
	}
	return fmt.Sprintf("pid %d: %s", h.PID, h.Command)
}

// portHolder is the process listening on port for 127.0.0.1, bound to it
// or to every address. found is false when nothing listens there; known is
// false where procfs cannot tell, off Linux, and the caller decides without
// it.
func portHolder(port int) (h holder, found, known bool) {
	inode, found, known := listeningInode(port)
	if !found {
		return holder{}, false, known
	}
	pid := socketOwner(inode)
	if pid == 0 {
		return holder{}, true, true
	}
	argv, _ := cmdline(pid)
	return holder{PID: pid, Command: shorten(strings.Join(argv, " "))}, true, true
}

// otherHolder reports whether port is held by a process other than pid,
// and which. A process that was just killed still shows its listening
// socket for a moment after its open files can no longer be read, so a
// holder nobody can see is asked again until pid has exited, the socket
// is gone or its owner shows, for up to holderSettle.
func otherHolder(ctx context.Context, pid, port int) (holder, bool) {
	deadline := time.Now().Add(holderSettle)
	for {
		h, found, known := portHolder(port)
		switch {
		case !known || !found || h.PID == pid || !alive(pid):
			return holder{}, false
		case h.PID != 0 || time.Now().After(deadline) || ctx.Err() != nil:
			return h, true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holderSettle bounds how long otherHolder waits for a dying process's
// socket to settle: a kill takes milliseconds, even on a loaded machine.
const holderSettle = 2 * time.Second

// shorten is a command line for one line of a message: escaped by
// safetext.Line against a script's newlines and a terminal's escapes, at
// most 100 bytes.
func shorten(cmd string) string {
	cmd = safetext.Line(cmd)
	if len(cmd) > 100 {
		cmd = strings.ToValidUTF8(cmd[:97], "") + "..."
	}
	return cmd
}

// loopbackListen are the local addresses, as /proc/net/tcp{,6} write them,
// of a socket that takes connections to 127.0.0.1: 127.0.0.1 itself, every
// IPv4 address, every address, and IPv4-mapped 127.0.0.1.
var loopbackListen = map[string]bool{
	"0100007F":                         true,
	"00000000":                         true,
	"00000000000000000000000000000000": true,
	"0000000000000000FFFF00000100007F": true,
}

// listeningInode is the inode of the socket listening on port for
// 127.0.0.1, from the kernel's socket tables: /proc/net/tcp, see proc(5).
func listeningInode(port int) (inode string, found, known bool) {
	const listen = "0A" // TCP_LISTEN
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		known = true
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(lines.Text())
			if len(fields) < 10 || fields[3] != listen {
				continue
			}
			ip, hexPort, ok := strings.Cut(fields[1], ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if ok && err == nil && int(p) == port && loopbackListen[ip] {
				f.Close()
				return fields[9], true, true
			}
		}
		f.Close()
	}
	return "", false, known
}

// socketOwner is the pid of a process holding socket inode open, 0 if none
// this user can see.
func socketOwner(inode string) int {
	target := "socket:[" + inode + "]"
	procs, _ := filepath.Glob("/proc/[0-9]*/fd")
	for _, fdDir := range procs {
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err == nil && link == target {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(fdDir)))
				return pid
			}
		}
	}
	return 0
}
