package devstack

import (
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
)

// The holder of a port is the process that listens on it (here, this
// test), found from the kernel's socket tables; a free port has none.
func TestPortHolder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("procfs is Linux's")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	h, found, known := portHolder(port)
	if !found || !known || h.PID != os.Getpid() || !strings.Contains(h.Command, ".test") {
		t.Errorf("holder of a port this test listens on: %+v (found %v, known %v), want pid %d",
			h, found, known, os.Getpid())
	}
	l.Close()
	if h, found, _ := portHolder(port); found {
		t.Errorf("a closed port has holder %+v", h)
	}
}

func TestShortenCommand(t *testing.T) {
	got := shorten("python3 -c \nimport socket\x1b[31m\n" + strings.Repeat("x", 200))
	if strings.ContainsAny(got, "\n\x1b") ||
		len(got) > 100 ||
		!strings.HasPrefix(got, `python3 -c \x0aimport socket\x1b[31m\x0axxx`) {
		t.Errorf("shorten = %q", got)
	}
}
