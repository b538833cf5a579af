package hub_test

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/hub"
)

// quick gives c short deadlines and one retry, for stalls.
func quick(c *hub.Client) *hub.Client {
	c.Deadlines = hub.Deadlines{
		Connect: 2 * time.Second,
		Headers: 400 * time.Millisecond,
		Idle:    400 * time.Millisecond,
	}
	c.Retries = 1
	return c
}

// host is the host:port of a stand-in URL.
func host(t *testing.T, u string) string {
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// A Hub that stops moving fails the request within its deadline (after a
// retry), with an error that names the Hub (or its storage) and the file:
// a part whose body the storage stops reading, a commit the Hub never
// answers, a download whose body stops. Without deadlines each of these
// held the push or the download until something outside killed it.
func TestAStalledHubFailsTheRequestNamingHostAndFile(t *testing.T) {
	for _, c := range []struct {
		route, what, host string
		after             int64
	}{
		{"part", "upload of data/public-00000-of-00001.parquet part", "storage", 10 << 10},
		{"commit", "commit to alice/whest-gt@main", "hub", 0},
	} {
		f := newFixture(t)
		f.srv.Hang(c.route, c.after)
		want := map[string]string{
			"storage": "the Hub's storage at " + host(t, f.srv.StorageURL),
			"hub":     "the Hub at " + host(t, f.srv.URL),
		}[c.host]
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		_, err := quick(client(t, f.srv, token)).Push(ctx, hub.Options{Repo: repoID}, f.files(t))
		cancel()
		if !errors.Is(err, hub.ErrStalled) ||
			!strings.Contains(err.Error(), c.what) ||
			!strings.Contains(err.Error(), want) {
			t.Errorf("%s hung: %v after %s, want a stall of %q at %s",
				c.route, err, time.Since(start), c.what, want)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s hung: the push took %s to fail, want about two deadlines", c.route, took)
		}
		if n := len(f.srv.History(repoID, "main")); n != 1 {
			t.Errorf("%s hung: %d commits, want none but the initial one", c.route, n)
		}
	}

	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	f.srv.Hang("lfs-file", 1000) // the holdout parquet has 1000 bytes: the public one stops
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	download := hub.DownloadOptions{Repo: repoID, Output: filepath.Join(t.TempDir(), "ds")}
	_, err := quick(reader(t, f.srv, "")).Download(ctx, download)
	if !errors.Is(err, hub.ErrStalled) ||
		!strings.Contains(err.Error(),
			"download data/public-00000-of-00001.parquet of alice/whest-gt") ||
		!strings.Contains(err.Error(), "the Hub's storage at "+host(t, f.srv.StorageURL)) {
		t.Errorf("a download whose body stops: %v", err)
	}
}

// The deadlines bound silence, not length: transfers that take longer
// than the idle deadline succeed while their bytes keep moving, in both
// directions (a 6 MiB object the storage reads at 4 MiB/s, a 192 KiB file
// it sends at 128 KiB/s).
func TestASlowButMovingTransferIsNotAStall(t *testing.T) {
	f := newFixture(t)
	f.srv.ChunkSize = 8 << 20
	write(t, f.dir, "data/public-00000-of-00001.parquet", random(t, 6<<20))
	f.srv.Throttle("basic", 4<<20)
	c := client(t, f.srv, token)
	// What the connection's buffers hold when the last byte is written
	// drains while the client waits for the answer: Headers covers it.
	c.Deadlines = hub.Deadlines{
		Connect: 2 * time.Second,
		Headers: 5 * time.Second,
		Idle:    time.Second,
	}
	c.Retries = 0
	start := time.Now()
	if _, err := c.Push(context.Background(), hub.Options{Repo: repoID}, f.files(t)); err != nil {
		t.Fatalf("a push through a slow storage: %v", err)
	}
	if took := time.Since(start); took < c.Deadlines.Idle {
		t.Errorf("the push took %s, under the idle deadline: the throttle did not hold it", took)
	}

	f.srv.Throttle("basic", 0)
	write(t, f.dir, "data/public-00000-of-00001.parquet", random(t, 192<<10))
	f.push(t, hub.Options{Repo: repoID})
	want, _ := f.srv.Files(repoID, "main")
	f.srv.Throttle("lfs-file", 128<<10)
	r := reader(t, f.srv, "")
	r.Deadlines = c.Deadlines
	r.Retries = 0
	out := filepath.Join(t.TempDir(), "ds")
	start = time.Now()
	download := hub.DownloadOptions{Repo: repoID, Output: out}
	if _, err := r.Download(context.Background(), download); err != nil {
		t.Fatalf("a download from a slow storage: %v", err)
	}
	if took := time.Since(start); took < c.Deadlines.Idle {
		t.Errorf("the download took %s, under the idle deadline: "+
			"the throttle did not hold it", took)
	}
	sameFiles(t, datasettest.ReadTree(t, out), want)
}
