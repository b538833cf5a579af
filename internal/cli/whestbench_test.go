package cli

import (
	"os"
	"strings"
	"testing"
)

// docs/WHESTBENCH.md's table of whestbench's flags is the CLI's: the same
// verbs, flags and hints, row for row.
func TestWhestbenchFlagsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/WHESTBENCH.md")
	if err != nil {
		t.Fatal(err)
	}
	const heading = "## Flags of whestbench's that whestbake does not take"
	_, section, ok := strings.Cut(string(data), heading)
	if !ok {
		t.Fatal("docs/WHESTBENCH.md has no section of whestbench's flags")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if strings.HasPrefix(line, "| `dataset ") && len(cells) == 3 {
			row := strings.ReplaceAll(strings.Trim(line, "| "), "`", "")
			documented = append(documented, row)
		}
	}
	var want []string
	for _, h := range whestbenchFlags {
		want = append(want, strings.TrimPrefix(h.Command, "whestbake ")+" | --"+h.Flag+" | "+h.Hint)
	}
	if strings.Join(documented, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/WHESTBENCH.md's table:\n%s\nthe CLI's (internal/cli/whestbench.go):\n%s",
			strings.Join(documented, "\n"), strings.Join(want, "\n"))
	}
}
