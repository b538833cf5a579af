package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/internal/hub"
)

// hostileFront is the stand-in behind a proxy that answers the requests
// hostile picks with body instead.
func hostileFront(t *testing.T, f *fixture, hostile func(*http.Request) bool, body string) string {
	t.Helper()
	target, _ := url.Parse(f.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hostile(r) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// empties is a JSON array of n empty objects: 3 bytes each, that a decoder
// would make a struct of tens of bytes each.
func empties(n int) string {
	return "[" + strings.Repeat("{},", n-1) + "{}]"
}

// Every document read from the Hub has a cap that fits it, and its tokens
// are counted before it is decoded, so that its size, not its shape, sets
// what reading it costs: a metadata.json over the 4 MiB a local one may
// have, or under it but made of empty objects (40 MB of them took
// `dataset info hf://…` 2 GB); a listing's page, the refs and an LFS
// batch answer made of empty objects; a listing of more files than the Hub
// keeps in a repository. Each is refused, naming what and why.
func TestHubDocumentsAreCappedToFitThem(t *testing.T) {
	f := newFixture(t)
	f.push(t, hub.Options{Repo: repoID})
	ctx := context.Background()
	for _, c := range []struct {
		name, metadata, want string
	}{
		{"a metadata.json over 4 MiB", `{"a":"` + strings.Repeat("x", 5<<20) + `"}`,
			"over 4 MiB"},
		{"a metadata.json of empty objects", `{"a":` + empties(1<<20) + `}`, "JSON tokens"},
	} {
		f.srv.CommitFiles(repoID, "main", c.name, map[string][]byte{"metadata.json": []byte(
			c.metadata)})
		_, err := reader(t, f.srv, token).ReadMetadata(ctx, repoID, "main")
		if err == nil || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "metadata.json") {
			t.Errorf("%s: %v, want it refused naming metadata.json and %q", c.name, err, c.want)
		}
	}

	tree := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/tree/") }
	refs := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/refs") }
	batch := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/batch") }
	for _, c := range []struct {
		name string
		call func(*hub.Client) error
		at   func(*http.Request) bool
		body string
	}{
		{"a listing's page", func(c *hub.Client) error {
			_, err := c.Tree(ctx, repoID, "main")
			return err
		}, tree, empties(1 << 20)},
		{"the refs", func(c *hub.Client) error {
			_, err := c.Tags(ctx, repoID)
			return err
		}, refs, `{"branches":[],"tags":` + empties(1<<20) + `}`},
		{"an LFS batch answer", func(c *hub.Client) error {
			_, err := c.Push(ctx, hub.Options{Repo: "alice/other"}, f.files(t))
			return err
		}, batch, `{"transfer":"basic","objects":` + empties(1<<20) + `}`},
	} {
		cl := clientAt(t, hostileFront(t, f, c.at, c.body))
		if err := c.call(cl); err == nil || !strings.Contains(err.Error(), "JSON tokens") {
			t.Errorf("%s of 3 MiB of empty objects: %v, want it refused for its tokens",
				c.name, err)
		}
	}

	pages := func(w http.ResponseWriter, r *http.Request) {
		page := 0
		_, _ = fmt.Sscan(r.URL.Query().Get("page"), &page)
		next := *r.URL
		next.RawQuery = url.Values{"page": {fmt.Sprint(page + 1)}}.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, next.RequestURI()))
		var entries []string
		for i := range 1000 {
			entries = append(entries, fmt.Sprintf(
				`{"type":"file","path":"f/%d/%d","size":1,"oid":"%040d"}`, page, i, 0))
		}
		_, _ = w.Write([]byte("[" + strings.Join(entries, ",") + "]"))
	}
	endless := httptest.NewServer(http.HandlerFunc(pages))
	defer endless.Close()
	_, err := clientAt(t, endless.URL).Tree(ctx, repoID, "main")
	if err == nil || !strings.Contains(err.Error(), "over 100000 files") {
		t.Errorf("a listing of endless pages of 1,000 files: %v, want it refused past 100,000",
			err)
	}
}

func clientAt(t *testing.T, endpoint string) *hub.Client {
	t.Helper()
	c, err := hub.New(endpoint, token)
	if err != nil {
		t.Fatal(err)
	}
	c.Retries = 0
	return c
}

// LFS batches hold at most 100 objects and 8 GiB, a larger object alone,
// so that the batch's answer, a URL per part, stays within its cap.
func TestLFSBatchesAreBoundedInObjectsAndBytes(t *testing.T) {
	var small []hub.File
	for i := range 250 {
		small = append(small, hub.File{Path: fmt.Sprint(i), Size: 1})
	}
	const gib = 1 << 30
	large := []hub.File{{Size: 5 * gib}, {Size: 3 * gib}, {Size: 1}, {Size: 20 * gib}, {Size: 1}}
	for _, c := range []struct {
		files []hub.File
		want  string
	}{
		{small, "[100 100 50]"},
		{large, "[2 1 1 1]"},
	} {
		var sizes []int
		for _, b := range hub.LFSBatches(c.files) {
			sizes = append(sizes, len(b))
		}
		if got := fmt.Sprint(sizes); got != c.want {
			t.Errorf("batches of %d files: sizes %s, want %s", len(c.files), got, c.want)
		}
	}
}
