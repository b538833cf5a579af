package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/gpuengine"
)

// helpGolden holds every command's --help text, and what a bare command
// that needs a verb says, as the command tree printed them when it was
// written, the machine's default thread count written <threads>. A change
// of a text made on purpose rewrites it with -update.
const helpGolden = "testdata/help.golden"

// TestHelpTextsAreTheGolden runs --help on every command of the tree, so
// that a change of how the tree is built cannot change what it prints.
func TestHelpTextsAreTheGolden(t *testing.T) {
	isolate(t)
	var got bytes.Buffer
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, stdout, stderr := run(t, args...)
		fmt.Fprintf(&got, "=== whestbake %s (exit %d)\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(io.Discard, io.Discard))
	for _, bare := range [][]string{{"dataset"}, {"dataset", "nosuch"}} {
		code, stdout, stderr := run(t, bare...)
		fmt.Fprintf(&got, "=== whestbake %s (exit %d)\n%s%s", strings.Join(bare, " "), code, stdout, stderr)
	}
	// --threads defaults to the machine's GOMAXPROCS.
	threads := fmt.Sprintf("(default %d)", gpuengine.DefaultThreads())
	masked := strings.ReplaceAll(got.String(), "[config: worker.threads] "+threads,
		"[config: worker.threads] (default <threads>)")
	if *updateGolden {
		if err := os.WriteFile(helpGolden, []byte(masked), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(filepath.FromSlash(helpGolden))
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if masked != string(want) {
		t.Errorf("the help texts differ from %s (-update rewrites it after a change made on purpose); "+
			"first difference at line %d:\n%s", helpGolden, firstDifferentLine(masked, string(want)), masked)
	}
}

// firstDifferentLine is the number of the first line where a and b differ.
func firstDifferentLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// datasetVerbsSorted are the names of datasetVerbs in cobra's order,
// by name, as a usage error lists them.
func datasetVerbsSorted() string {
	var names []string
	for _, newVerb := range datasetVerbs {
		names = append(names, newVerb().Name())
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
