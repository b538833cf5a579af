package e2e

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromiumFlags run a headless Chromium on a machine whose network is
// closed: without them it tries Google's services (QUIC, component
// updates, sync) and the page never settles.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
}

// checkWebUI opens the finished bake's page, at the link whestbake status
// prints, in headless Chromium against the Web UI server of DEPLOY §2 and
// finds its two splits; the public split's page shows its slices.
func checkWebUI(t *testing.T, s *stack, cfg, id string) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		missingSystem(t, "chromium is missing: install it with `apt-get install chromium` "+
			"(Debian's; .ci/run does)", "E2E_REQUIRE_CHROMIUM")
	}
	var link string
	for _, l := range strings.Split(s.mustWhestbake("status", id, "--config-file", cfg).stdout, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Web UI"); ok {
			link = strings.TrimSpace(v)
		}
	}
	if !strings.HasPrefix(link, "http://127.0.0.1:") {
		t.Fatalf("status prints no Web UI link of the bake: %q", link)
	}
	// The timeline labels each child workflow and activity with its
	// summary; the input shows the policy's durations as the config
	// writes them (bakeapi.Duration), not as nanoseconds.
	bake := dumpDOM(t, browser, link)
	for _, want := range []string{
		"split public of bake " + id, "split holdout of bake " + id,
		"MergeSplit", "CombineSplits",
		`"SliceHeartbeat" : "2s"`,
	} {
		if !strings.Contains(pageText(bake), want) {
			t.Errorf("the bake's page in the Web UI does not show %q", want)
		}
	}
	split := dumpDOM(t, browser, strings.Replace(link, "bake%2F"+id, "bake%2F"+id+"%2Fsplit%2Fpublic", 1))
	for _, want := range []string{"BakeSlice", "public MLPs 0-0", "public MLPs 1-2"} {
		if !strings.Contains(pageText(split), want) {
			t.Errorf("the public split's page in the Web UI does not show %q", want)
		}
	}
	if t.Failed() {
		// go test -artifacts keeps them.
		keep := t.ArtifactDir()
		_ = os.WriteFile(filepath.Join(keep, "webui-bake.html"), []byte(bake), 0o644)
		_ = os.WriteFile(filepath.Join(keep, "webui-split.html"), []byte(split), 0o644)
		t.Logf("the pages Chromium rendered are in %s", keep)
	}
}

// pageText is what a page shows: its DOM's text, without markup, scripts
// or styles, runs of white space made one space.
func pageText(dom string) string {
	for _, re := range []string{`(?s)<script.*?</script>`, `(?s)<style.*?</style>`, `<[^>]*>`} {
		dom = regexp.MustCompile(re).ReplaceAllString(dom, " ")
	}
	return strings.Join(strings.Fields(html.UnescapeString(dom)), " ")
}

// dumpDOM is the page at url once its scripts have run and fetched.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(chromiumFlags, "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=20000", "--dump-dom", url)
	out, err := exec.CommandContext(ctx, browser, args...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	return string(out)
}
