package activities_test

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
)

// putFaults answers the first n PUTs of every object under prefix with 503
// Slow Down (n < 0: every PUT), and counts the PUTs of each object.
type putFaults struct {
	prefix string
	n      int
	mu     sync.Mutex
	puts   map[string]int
}

func (p *putFaults) fault(r *http.Request) devtest.Fault {
	if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, p.prefix) {
		return devtest.Fault{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.puts[r.URL.Path]++
	if p.n < 0 || p.puts[r.URL.Path] <= p.n {
		return devtest.Fault{Status: http.StatusServiceUnavailable}
	}
	return devtest.Fault{}
}

// pushThrough pushes dataset ds as release name/v1 with the release's PUTs
// failing as faults says, and returns Push's error.
func pushThrough(
	t *testing.T,
	f *fixture,
	ds bakeapi.CombineSplitsOutput,
	name string,
	faults *putFaults,
) error {
	t.Helper()
	proxy := devtest.StartFaultProxy(t, f.cfg.Endpoint)
	proxy.SetFault(faults.fault)
	a := f.acts(gpuengine.CPU{})
	a.Store = f.storeVia(t, proxy.Addr)
	_, err := run[bakeapi.PushOutput](a, a.Push, releaseInput(f, ds.Prefix, name, "v1"))
	return err
}

// testPushRidesOutABurstOf503s: S3 answering Slow Down to the first three
// PUTs of every release file (a burst) costs the push a few seconds, not
// its attempt: each file is tried again within the attempt, and the
// release is complete and intact.
func testPushRidesOutABurstOf503s(t *testing.T, f *fixture) {
	activities.SetCopyRetry(t, 6, 10*time.Millisecond, 50*time.Millisecond)
	ds := bakeDataset(t, f, "burst", 7)
	faults := &putFaults{prefix: "/datasets/burst/", n: 3, puts: map[string]int{}}
	if err := pushThrough(t, f, ds, "burst", faults); err != nil {
		t.Fatalf("push through a burst of three 503s per file: %v", err)
	}
	rel := keys.Release("datasets", "burst", "v1")
	for _, file := range readManifest(t, f.st, ds.Prefix).Files {
		info, err := f.st.Stat(context.Background(), path.Join(rel, file.Path))
		if err != nil || info.SHA256 != file.SHA256 {
			t.Errorf("release %s: %+v (%v), want sha256 %s", file.Path, info, err, file.SHA256)
		}
		if n := faults.puts["/"+f.bucket+"/"+path.Join(rel, file.Path)]; n != 4 {
			t.Errorf("%s was PUT %d times, want 4 (three refused)", file.Path, n)
		}
	}
}

// testPushEndsItsAttemptInAStormOf503s: S3 refusing every PUT fails the
// attempt after copyRetry's tries of the first file, as a retryable error
// that says what failed, how often, and why the attempt ends; the release
// stays invisible.
func testPushEndsItsAttemptInAStormOf503s(t *testing.T, f *fixture) {
	activities.SetCopyRetry(t, 3, 10*time.Millisecond, 50*time.Millisecond)
	ds := bakeDataset(t, f, "storm", 8)
	faults := &putFaults{prefix: "/datasets/storm/", n: -1, puts: map[string]int{}}
	err := pushThrough(t, f, ds, "storm", faults)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.NonRetryable() {
		t.Fatalf("push in a storm: %v, want a retryable failure", err)
	}
	first := readManifest(t, f.st, ds.Prefix).Files[0].Path
	for _, want := range []string{
		"copying " + first + " failed 3 times",
		"Please reduce your request rate",
		"S3 keeps failing, so this attempt ends",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	rel := keys.Release("datasets", "storm", "v1")
	if n := faults.puts["/"+f.bucket+"/"+path.Join(rel, first)]; n != 3 {
		t.Errorf("%s was PUT %d times, want 3: the tries are bounded", first, n)
	}
	if ok, _ := f.st.Exists(context.Background(), keys.Manifest(rel)); ok {
		t.Error("a push that failed made its release visible")
	}
}
