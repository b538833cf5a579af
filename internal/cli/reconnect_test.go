package cli

import (
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/devstack"
)

// cutProxy forwards a loopback port to a server until cut, which closes
// its listener and every connection, as a server that goes down does;
// restore listens on the same port again.
type cutProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	p := &cutProxy{t: t, target: target}
	p.listen("127.0.0.1:0")
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *cutProxy) restore() { p.listen(p.addr) }

// outcome is one run of the command line.
type outcome struct {
	code      int
	out, errs string
}

func runAsync(t *testing.T, args ...string) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		code, out, errs := run(t, args...)
		done <- outcome{code, out, errs}
	}()
	return done
}

// A Temporal server that stops answering mid-watch (a restart) for longer
// than the SDK's own retries of a call (10 s) is asked again, each way
// saying so on stderr, and the watch sees the bake to its end; one that
// stays away past --reconnect-for ends the watch with exit status 3,
// saying that the bake runs on and how to follow it again. A reattached
// bake --wait reports the bake's own time, not its own.
func TestWatchRidesOutAServerOutage(t *testing.T) {
	o := startDevStack(t, devstack.ArtifactsBucket)
	long := strings.Replace(slowConfigYAML, "n-mlps: 6", "n-mlps: 16", 1)
	cfgFile := writeFile(t, filepath.Join(t.TempDir(), "c.yaml"), long+workerConfigYAML)
	p := newCutProxy(t, o.TemporalAddr())
	t.Setenv("WHESTBAKE_TEMPORAL_ADDRESS", p.addr) // the starter goes through the proxy

	started := time.Now()
	mustRun(t, "bake", "--config-file", cfgFile, "--id", "outage")
	watch := func(rideOut string) <-chan outcome {
		return runAsync(t, "watch", "outage", "--config-file", cfgFile,
			"--interval", "200ms", "--reconnect-for", rideOut)
	}
	rides, gives := watch("2m"), watch("1s")
	time.Sleep(time.Second)
	p.cut()
	r := <-gives
	time.Sleep(time.Second)
	p.restore()
	// The worker starts only now, straight to the server: the bake is still
	// running when --wait reattaches below, however fast this machine bakes.
	startWorker(t, cfgFile, io.Discard)

	for _, want := range []string{
		"stopped watching: the Temporal server at " + p.addr,
		"has not answered for",
		"the bake keeps running on its workers",
		"`whestbake watch outage`",
	} {
		if !strings.Contains(r.errs, want) {
			t.Errorf("watch of a server that stays away: stderr lacks %q", want)
		}
	}
	if r.code != 3 {
		t.Errorf("watch of a server that stays away: exit %d, want 3\n%s", r.code, r.errs)
	}

	out := mustRun(t, "bake", "--config-file", cfgFile, "--id", "outage", "--wait")
	took := time.Since(started)
	m := regexp.MustCompile(`done in (\d+(?:\.\d)?)s \(its run: `).FindStringSubmatch(out)
	if !strings.Contains(out, "Reattached to running bake outage") || m == nil {
		t.Fatalf("reattached bake --wait:\n%s", out)
	}
	// The bake ran from before the outage to the end of this --wait, of
	// which the reattached --wait saw only the end.
	if s, _ := strconv.ParseFloat(m[1], 64); s < took.Seconds()-3 {
		t.Errorf("reattached bake --wait says done in %ss; the bake ran for about %s:\n%s",
			m[1], took.Round(time.Second), out)
	}

	r = <-rides
	if r.code != 0 ||
		!strings.Contains(r.out, "Bake outage: COMPLETED") ||
		!strings.Contains(r.errs, "the Temporal server at "+p.addr+" does not answer") ||
		!strings.Contains(r.errs, "the bake runs on, on its workers") ||
		!strings.Contains(r.errs, "the Temporal server at "+p.addr+" answers again, after") {
		t.Errorf("watch through an outage: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errs)
	}
}
