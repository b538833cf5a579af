package migrate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// bakeFlags are a few of dataset bake's flags as the CLI describes them.
var bakeFlags = map[string]Flag{
	"width":     {Key: "bake.width"},
	"threads":   {Key: "worker.threads"},
	"split":     {SplitKey: "name"},
	"n-mlps":    {SplitKey: "n-mlps"},
	"mlp-seeds": {SplitKey: "seeds-file", Path: true},
	"output":    {},
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// An old file's flags land under their keys, the split flags in one entry
// of bake.splits named by the default split, a relative path made
// absolute; a flag without a key and a key that is no flag are only
// named, in comments, which a YAML reader does not see.
func TestFlagFileMovesEachFlagUnderItsKey(t *testing.T) {
	t.Chdir(t.TempDir())
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	old := write(t, "old.toml", "width = 8\nthreads = 2\nn-mlps = 4\nmlp-seeds = \"s.json\"\n"+
		"output = \"out dir\"\nnosuch = 1\n")
	out, err := FlagFile(Input{
		File:         old,
		Verb:         "whestbake dataset bake",
		Flags:        bakeFlags,
		DefaultSplit: "public",
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Bake struct {
			Width  int
			Splits []map[string]any
		}
		Worker struct{ Threads int }
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	split := map[string]any{
		"name":       "public",
		"n-mlps":     4,
		"seeds-file": filepath.Join(wd, "s.json"),
	}
	if doc.Bake.Width != 8 || doc.Worker.Threads != 2 || len(doc.Bake.Splits) != 1 ||
		len(doc.Bake.Splits[0]) != len(split) {
		t.Fatalf("migrated to %+v:\n%s", doc, out)
	}
	for k, want := range split {
		if got := doc.Bake.Splits[0][k]; got != want {
			t.Errorf("bake.splits[0].%s = %v, want %v", k, got, want)
		}
	}
	for _, want := range []string{
		"#   --output 'out dir'\n",
		"# Not flags of `whestbake dataset bake`, so the old file's reader ignored them: " +
			"\"nosuch\"",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// A migrated file that the schema refuses is an error naming the old
// file, never printed.
func TestFlagFileRefusesWhatDoesNotLoad(t *testing.T) {
	old := write(t, "old.yaml", "threads: many\n")
	out, err := FlagFile(Input{File: old, Verb: "whestbake calibrate", Flags: bakeFlags})
	if err == nil || !strings.Contains(err.Error(), old+" migrated does not load") || out != nil {
		t.Fatalf("got %q, %v", out, err)
	}
}

// shellQuote's output is read back by sh as the value it quoted, for the
// payloads of the CLI's injection test and quotes, newlines and every byte
// a value may hold.
func TestShellQuoteRoundTripsThroughSh(t *testing.T) {
	for _, v := range []string{"plain-1.0", "", "it's", "$(touch /tmp/x)", "`id`", "a b\tc",
		"x\nrelease:\n  hub: 1", "'\\''", "ü✓", "-n", "*"} {
		out, err := exec.Command("sh", "-c", "printf '%s' "+shellQuote(v)).CombinedOutput()
		if err != nil || string(out) != v {
			t.Errorf("shellQuote(%q) = %s, which sh reads as %q (%v)", v, shellQuote(v), out, err)
		}
	}
}
