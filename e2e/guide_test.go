package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every variable the production-topology test sets for the guide's
// commands is read by them or by deploy/temporal/ and deploy/temporal-ui/:
// a variable renamed in one place and not the other fails here, instead of
// the server quietly taking its default.
func TestGuideVariablesAreRead(t *testing.T) {
	read := map[string]bool{}
	for _, f := range []string{
		"deploy/temporal/config/production.yaml",
		"deploy/temporal-ui/config/production.yaml",
	} {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`env "([A-Z0-9_]+)"`).FindAllStringSubmatch(string(data), -1) {
			read[m[1]] = true
		}
	}
	for _, name := range []string{"database", "server", "namespace", "search-attributes", "buckets", "ui"} {
		body, err := guideBlock(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]*)`).FindAllStringSubmatch(body, -1) {
			read[m[1]] = true
		}
	}
	g := newGuide(t, t.TempDir(), 5432)
	for name := range g.vars {
		if !read[name] && !strings.HasPrefix(name, "WHESTBAKE_") {
			t.Errorf("the test sets %s, which neither DEPLOY.md's commands nor deploy/'s configs read", name)
		}
	}
}
