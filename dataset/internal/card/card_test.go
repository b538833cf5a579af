package card

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// testdata/scalars.jsonl holds PyYAML 6.0's yaml.dump of {"k": s}.
func TestYAMLScalarsMatchPyYAML(t *testing.T) {
	f, err := os.Open("testdata/scalars.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var pair [2]string
		if err := json.Unmarshal(sc.Bytes(), &pair); err != nil {
			t.Fatal(err)
		}
		if got := yamlDump(map[string]any{"k": pair[0]}); got != pair[1] {
			t.Errorf("%q: got %q, PyYAML %q", pair[0], got, pair[1])
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d samples", n)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0:          "0",
		999:        "999",
		1000:       "1,000",
		1000000000: "1,000,000,000",
		-12345:     "-12,345",
	} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %s", n, got)
		}
	}
}
