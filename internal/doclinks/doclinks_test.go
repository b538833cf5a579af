package doclinks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

const root = "../.."

func TestMarkdownLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	anchors := map[string]map[string]bool{} // file → its headings' anchors
	for _, file := range files {
		links, _ := parse(t, file)
		for _, link := range links {
			path, anchor, _ := strings.Cut(link, "#")
			target := file
			if path != "" {
				target = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %q: %v", rel(file), link, err)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if anchors[target] == nil {
				_, anchors[target] = parse(t, target)
			}
			if !anchors[target][anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s",
					rel(file), link, rel(target), anchor)
			}
		}
	}
}

// parse returns a markdown file's relative link destinations (links and
// images; not URLs) and its headings' anchors.
func parse(t *testing.T, file string) (links []string, anchors map[string]bool) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	anchors = map[string]bool{}
	seen := map[string]int{}
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	err = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest string
		switch n := n.(type) {
		case *ast.Link:
			dest = string(n.Destination)
		case *ast.Image:
			dest = string(n.Destination)
		case *ast.Heading:
			a := slug(plainText(n, src))
			if k := seen[a]; k > 0 {
				anchors[a+"-"+strconv.Itoa(k)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		if dest != "" && !strings.Contains(dest, "://") && !strings.HasPrefix(dest, "mailto:") {
			links = append(links, dest)
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return links, anchors
}

func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// slug is GitHub's heading anchor: lower case, letters, digits, '-' and '_'
// kept, spaces made '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func rel(file string) string {
	r, err := filepath.Rel(root, file)
	if err != nil {
		return file
	}
	return r
}
