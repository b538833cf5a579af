package layering

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The import list in docs/ARCHITECTURE.md ("The packages, drawn") is what go
// list says, so the drawing cannot show arrows that do not exist. On a
// mismatch the test prints the list to paste.
func TestImportListMatchesDoc(t *testing.T) {
	format := "{{.ImportPath}}:{{range .Imports}} {{.}}{{end}}"
	out, err := exec.Command("go", "list", "-f", format, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	want := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		var own []string
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		if len(own) > 0 {
			sort.Strings(own)
			want[strings.TrimPrefix(pkg, module)] = own
		}
	}
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseImportList(string(doc))
	if err != nil {
		t.Fatalf("docs/ARCHITECTURE.md: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("docs/ARCHITECTURE.md's import list is not go list's; "+
			"replace the ```imports block with:\n%s", formatImportList(want))
	}
}

// parseImportList reads the ```imports block: "pkg ─▶ a, b," lines, an
// indented line continuing the one above.
func parseImportList(doc string) (map[string][]string, error) {
	_, block, ok := strings.Cut(doc, "```imports\n")
	if !ok {
		return nil, fmt.Errorf("no ```imports block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		return nil, fmt.Errorf("the ```imports block does not end")
	}
	list := map[string][]string{}
	var pkg string
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		rest := line
		if !strings.HasPrefix(line, " ") {
			var ok bool
			pkg, rest, ok = strings.Cut(line, "─▶")
			if !ok {
				return nil, fmt.Errorf("line %q has no ─▶", line)
			}
			pkg = strings.TrimSpace(pkg)
		} else if pkg == "" {
			return nil, fmt.Errorf("the block starts with a continuation line")
		}
		for _, imp := range strings.Split(rest, ",") {
			if imp = strings.TrimSpace(imp); imp != "" {
				list[pkg] = append(list[pkg], imp)
			}
		}
	}
	for _, imps := range list {
		sort.Strings(imps)
	}
	return list, nil
}

// formatImportList writes the block's lines, wrapped before column 92.
func formatImportList(list map[string][]string) string {
	var pkgs []string
	width := 0
	for p := range list {
		pkgs = append(pkgs, p)
		width = max(width, len(p))
	}
	sort.Strings(pkgs)
	var b strings.Builder
	for _, p := range pkgs {
		head := fmt.Sprintf("%-*s ─▶ ", width, p)
		indent := strings.Repeat(" ", width+4)
		line, col := head, width+4
		for i, imp := range list[p] {
			tok := imp
			if i < len(list[p])-1 {
				tok += ","
			}
			if i > 0 && col+len(tok) > 92 {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line, col = indent, width+4
			}
			line += tok + " "
			col += len(tok) + 1
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}
