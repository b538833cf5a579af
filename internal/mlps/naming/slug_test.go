package naming

import "testing"

// Expected values follow whestbench's _slugify regexes by hand: drop [^a-z\s-] after
// lowercasing, collapse [\s-]+ to "-", strip "-".
func TestSlugify(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Megan", "megan"},
		{"O'Connor", "oconnor"},
		{"Mary Ann", "mary-ann"},
		{"  Jean -- Luc\t", "jean-luc"},
		{"Dr.", "dr"},
		{"-Smith-", "smith"},
		{"a - . - b", "a-b"},
		{"Jr. III", "jr-iii"},
		{"x\x1fy", "x-y"},
		{"42", ""},
	} {
		if got := slugify(c.in); got != c.want {
			t.Errorf("slugify(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
