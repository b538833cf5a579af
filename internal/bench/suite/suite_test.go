package suite

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/bench/gate"
)

// The counting proxy passes requests through unchanged — the Host header the
// client signed included — and counts requests and the bytes of both bodies.
func TestS3CounterCountsRequestsAndBytes(t *testing.T) {
	var hosts []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusOK)
			return
		}
		_, _ = io.WriteString(w, "response of "+r.URL.Path+string(body))
	}))
	defer backend.Close()
	c, err := startS3Counter(strings.TrimPrefix(backend.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()

	body := strings.NewReader("0123456789")
	req, _ := http.NewRequest(http.MethodPut, "http://"+c.addr+"/bucket/key", body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Get("http://" + c.addr + "/bucket/key")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	if string(got) != "response of /bucket/key" {
		t.Errorf("GET through the proxy: %q", got)
	}
	for _, h := range hosts {
		if h != c.addr {
			t.Errorf("the server saw Host %q, want the proxy's %q (the host clients sign)",
				h, c.addr)
		}
	}
	r, up, down := c.requests.Load(), c.bytesUp.Load(), c.bytesDown.Load()
	if r != 2 || up != 10 || down != int64(len(got)) {
		t.Errorf("counted %d requests, %d bytes up, %d down; want 2, 10, %d", r, up, down, len(got))
	}
	c.reset()
	if c.requests.Load()+c.bytesUp.Load()+c.bytesDown.Load() != 0 {
		t.Error("reset left counts")
	}
}

// Plan follows the selection, and leaves out the A/B metrics when there is
// no reference build (CI).
func TestPlanSelection(t *testing.T) {
	all := Plan(Options{AB: true})
	keys := map[string]bool{}
	for _, m := range all {
		if keys[m.Key()] {
			t.Errorf("metric %q twice", m.Key())
		}
		keys[m.Key()] = true
	}
	for _, want := range []string{
		"engine philox W=256 D=8 / speed vs numpy peer",
		"engine numpy W=64 D=4 / speed vs baseline build",
		"local pipeline 256 MLPs W=256 D=8 / merge peak RSS",
		"temporal bake 8 MLPs W=64 D=4 / history events",
	} {
		if !keys[want] {
			t.Errorf("plan lacks %q", want)
		}
	}
	for _, m := range Plan(Options{}) {
		if m.InRun {
			t.Errorf("%s planned without a reference build", m.Key())
		}
	}
	only := Plan(Options{
		AB:       true,
		Selected: func(m gate.Metric) bool { return m.Name == s3Requests },
	})
	if len(only) != 1 || only[0].Workload != temporalWorkload {
		t.Errorf("selection of one metric planned %v", only)
	}
}

// A developer's WHESTBAKE_* settings stay out of the workloads, except the
// kernel cap, which the gate's machine class records and the children must
// honour.
func TestChildEnvKeepsOnlyTheKernelCap(t *testing.T) {
	t.Setenv("WHESTBAKE_RELEASE_TAG", "mine")
	t.Setenv("WHESTBAKE_CPU_KERNEL", "avx2")
	env := strings.Join(childEnv([]string{"EXTRA=1"}), "\n") + "\n"
	if strings.Contains(env, "WHESTBAKE_RELEASE_TAG") ||
		!strings.Contains(env, "\nWHESTBAKE_CPU_KERNEL=avx2\n") ||
		!strings.HasSuffix(env, "\nEXTRA=1\n") {
		t.Errorf("child environment:\n%s", env)
	}
}

// --demo-slowdown's busy work is CPU time the process really spends, as a
// slower engine's would be.
func TestBurnSpendsCPUTime(t *testing.T) {
	start := cpuTime()
	if start <= 0 {
		t.Skip("no process CPU clock on this OS")
	}
	burn(start + 0.05)
	// Compared as burn compares: end − start may round below 0.05 when
	// end ≥ start + 0.05 holds.
	if end := cpuTime(); end < start+0.05 || end-start > 0.2 {
		t.Errorf("burn to +50 ms of CPU time spent %.3f s", end-start)
	}
}
