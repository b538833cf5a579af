package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/hub/hubtest"
	"github.com/whestbake/whestbake/internal/safetext"
)

// hostile holds what a dataset or a server could send a terminal: a CSI
// that clears the screen, an OSC 52 clipboard write ended by BEL, the C1
// CSI introducer U+009B, a right-to-left override, DEL, a NUL and a
// newline; and ordinary Unicode, which stays as it is.
const hostile = "x\x1b[2J\x1b]52;c;aGVsbG8=\x07\u009b31m\u202eevil\x7f\x00\nline two ü✓ 日本"

// assertInert fails when text holds any character a terminal acts on or
// that reorders text, and checks that the hostile string's ordinary
// Unicode and the escaped ESC are there.
func assertInert(t *testing.T, what, text string, newlinesAllowed bool) {
	t.Helper()
	for _, r := range text {
		if safetext.IsControl(r) && !(r == '\n' && newlinesAllowed) && !(r == '\t' && newlinesAllowed) {
			t.Errorf("%s prints the control character %U:\n%q", what, r, text)
			return
		}
	}
	if !strings.Contains(text, `\x1b[2J`) || !strings.Contains(text, "ü✓ 日本") {
		t.Errorf("%s does not show the hostile string escaped with its Unicode kept:\n%q",
			what, text)
	}
}

// writeJSON carries a hostile string as it is, and prints no control
// character of it raw.
func TestWriteJSONEscapesControls(t *testing.T) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, map[string]string{"v": hostile}); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["v"] != hostile {
		t.Errorf("writeJSON does not round-trip: %v %q", err, back["v"])
	}
	for _, r := range buf.String() {
		if safetext.IsControl(r) && r != '\n' {
			t.Errorf("writeJSON prints %U raw: %q", r, buf.String())
		}
	}
}

// A dataset whose metadata.json strings, split names and mlp_name hold
// terminal escapes, and a Hub that serves such a metadata.json: info
// (directory and hf://), inspect, verify, compare (text and --json) and
// the error text of a verb that refuses the dataset print them escaped.
func TestDatasetAndHubStringsReachNoTerminal(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	clean := at("clean")
	mustRun(t, "dataset", "bake", "--n-mlps", "2", "--n-samples", "300",
		"--width", "4", "--depth", "2",
		"--mlp-seeds", writeFile(t, at("seeds.json"), "[1, 2]"), "-o", clean)
	d, err := dataset.ReadDir(clean, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"backend", "created_at_utc", "device", "whestbake_version"} {
		d.Meta.Set(k, hostile)
	}
	rows := d.Splits[0].Rows
	for i := range rows {
		rows[i].Name = hostile
	}
	bad := at("bad")
	if err := dataset.WriteDir(bad, d.Meta, bakeapi.Spec{Width: 4, Depth: 2}, rows); err != nil {
		t.Fatal(err)
	}
	// info validates nothing: a split named by the hostile string.
	infoOnly := at("info-only")
	md := `{"schema_version": "3.0", "splits": {` + jsonQuote(hostile) +
		`: {"n_mlps": 1, "config": ` + jsonQuote(hostile) + `}}, ` +
		`"created_at_utc": ` + jsonQuote(hostile) + `}`
	if err := os.Mkdir(infoOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(infoOnly, "metadata.json"), md)

	srv := hubtest.New(t)
	srv.AddToken("hf_esc_token_9d8e", "alice", "write")
	c, err := hub.New(srv.URL, "hf_esc_token_9d8e")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateRepo(context.Background(), "alice/esc", false); err != nil {
		t.Fatal(err)
	}
	srv.CommitFiles("alice/esc", "main", "hostile", map[string][]byte{"metadata.json": []byte(md)})
	t.Setenv("HF_TOKEN", "hf_esc_token_9d8e")

	for _, args := range [][]string{
		{"dataset", "info", bad},
		{"dataset", "info", infoOnly},
		{"dataset", "info", "hf://alice/esc", "--endpoint", srv.URL},
		{"dataset", "inspect", bad},
		{"dataset", "verify", bad, "--k", "1"},
		{"dataset", "compare", clean, bad},
		// An error text quoting what it was given.
		{"dataset", "inspect", at(hostile)},
	} {
		_, out, errs := run(t, args...)
		assertInert(t, strings.Join(args[:2], " "), out+errs, true)
	}
	_, out, _ := run(t, "dataset", "compare", clean, bad, "--json")
	for _, r := range out {
		if safetext.IsControl(r) && r != '\n' {
			t.Errorf("compare --json prints %U raw", r)
		}
	}
	var res struct{ Differences []struct{ A, B string } }
	err = json.Unmarshal([]byte(out), &res)
	if err != nil || len(res.Differences) == 0 || res.Differences[0].B != hostile {
		t.Errorf("compare --json does not carry the mlp_name as it is: %v\n%s", err, out)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
