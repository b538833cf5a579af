package dataset

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// hostile is free text as a hand-edited metadata.json may hold it: raw
// HTML, a line break into a heading, a javascript: link and image, a
// table cell break, and backticks that close a code span.
const hostile = "x` <script>alert(1)</script> <img src=x onerror=alert(2)>\n# Owned\n" +
	"[click](javascript:alert(3)) ![i](javascript:alert(4)) <javascript:alert(5)> " +
	"| cell ``` ' $(rm -rf ~)"

// renderHTML is the card's Markdown as a CommonMark + GFM renderer (the
// Hub's dialect) turns it into HTML, raw HTML passed through as the Hub
// does.
func renderHTML(t *testing.T, card string) string {
	t.Helper()
	_, body, _ := strings.Cut(strings.TrimPrefix(card, "---\n"), "\n---\n")
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(html.WithUnsafe()))
	var out bytes.Buffer
	if err := md.Convert([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Free text from metadata.json (CPU brand, OS, salt id, pretty name,
// sampler, backend, dates, versions) is escaped where the card shows it:
// it adds no HTML, heading, link, image, table cell or shell word, while
// the card of ordinary text keeps its bytes (internal/cli's golden tests).
func TestCardEscapesFreeTextFromMetadata(t *testing.T) {
	render := func(text string, v4 bool) string {
		md, err := ReadMetadata(filepath.Join(fixtures, "single_split_v3_protocol"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{
			"pretty_name", "created_at_utc", "whestbake_version", "backend", "sampler",
			"algorithm_version", "engine", "device", "driver", "seed_file_sha256",
		} {
			md.Set(k, text+" "+k)
		}
		md.Set("hardware", NewObject().
			Set("cpu_brand", text+" cpu").
			Set("os", text+" os").
			Set("device", "cpu"))
		if v4 {
			md.Set("seed_protocol", NewObject().
				Set("name", SeedProtocolV4Name).
				Set("version", SeedProtocolV4Version).
				Set("salt_source", SaltSourceEnv).
				Set("salt_digest", text+" digest").
				Set("salt_id", text+" id"))
			md.Set("sampler", "numpy")
			md.Set("dot_product", text+" dot")
		}
		card, err := RenderCard(md)
		if err != nil {
			t.Fatal(err)
		}
		return card
	}
	plainCard := render("plain", false)
	v3Card := render(hostile, false)
	v4Card := render(hostile, true)
	structure := regexp.MustCompile(`<(h[1-6]|tr|li|pre)\b`)
	count := func(html string) map[string]int {
		n := map[string]int{}
		for _, m := range structure.FindAllStringSubmatch(html, -1) {
			n[m[1]]++
		}
		return n
	}
	want := count(renderHTML(t, plainCard))
	for name, card := range map[string]string{
		"protocol 3.0":                v3Card,
		"protocol 4.0, withheld salt": v4Card,
	} {
		got := renderHTML(t, card)
		for _, bad := range []string{
			"<script", "<img", "javascript:alert(3)\"", `href="javascript:`, `src="javascript:`,
			"<h1>Owned", "<h2>Owned",
		} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: the card renders %q", name, bad)
			}
		}
		if !strings.Contains(got, "&lt;script&gt;") {
			t.Errorf("%s: the text is not shown as text", name)
		}
		n := count(got)
		if name == "protocol 3.0" &&
			(n["h1"] != want["h1"] || n["h2"] != want["h2"] || n["tr"] != want["tr"]) {
			t.Errorf("%s: %v headings and table rows, the ordinary card has %v", name, n, want)
		}
		if n["h1"] != 1 {
			t.Errorf("%s: %d top-level headings, want the title alone", name, n["h1"])
		}
		for _, line := range strings.Split(card, "\n") {
			if strings.HasPrefix(line, "whestbake dataset bake") &&
				(strings.Contains(line, "$(rm") && !strings.Contains(line, "'x` <script>")) {
				t.Errorf("%s: the re-bake command carries an unquoted shell word: %s", name, line)
			}
		}
	}
	if !strings.Contains(v4Card, "--salt-id 'x` <script>") ||
		!strings.Contains(v4Card, "--dot-product 'x` <script>") {
		t.Errorf("the re-bake command does not quote the salt id and the dot product:\n%s", v4Card)
	}
}
