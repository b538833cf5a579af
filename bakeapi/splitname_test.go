package bakeapi

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// testdata/splitnames/names.jsonl holds what Python's re says of each name
// under datasets' split rule and whestbench's (gen.py says where each rule
// comes from). A name is accepted exactly when both readers accept it, with
// three refusals of names they both pass: "all" (datasets' union of every
// split), names over MaxSplitNameLen, and names with a line break, which
// Python's $ lets through before a final "\n".
func TestSplitNameIsWhatDatasetsAndWhestbenchBothLoad(t *testing.T) {
	f, err := os.Open("testdata/splitnames/names.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var n, both, datasetsOnly, whestbenchOnly int
	for sc.Scan() {
		var row struct {
			name                 string
			datasets, whestbench bool
		}
		fields := []any{&row.name, &row.datasets, &row.whestbench}
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
			t.Fatal(err)
		}
		n++
		want := row.datasets &&
			row.whestbench &&
			row.name != "all" &&
			len(row.name) <= MaxSplitNameLen &&
			!strings.Contains(row.name, "\n")
		err := CheckSplitName(row.name)
		if got := err == nil; got != want {
			t.Errorf("CheckSplitName(%q) = %v; datasets accepts it: %v, whestbench: %v",
				row.name, err, row.datasets, row.whestbench)
		}
		switch {
		case row.datasets && row.whestbench:
			both++
		case row.datasets:
			datasetsOnly++
		case row.whestbench:
			whestbenchOnly++
		}
		// A refusal's suggestion is a name the rule accepts.
		if err != nil {
			if s := suggestSplitName(row.name); CheckSplitName(s) != nil {
				t.Errorf("suggestion %q for %q is refused too", s, row.name)
			}
		}
		// Every name new datasets may have, whestbench also accepts in
		// the datasets it reads.
		if err == nil && CheckWhestbenchName(row.name) != nil {
			t.Errorf("%q is a split name CheckWhestbenchName refuses", row.name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Each side of the rule is sampled: names both load, names only
	// datasets loads (Unicode letters, '_', '.', capitals) and names only
	// whestbench loads (hyphens).
	if n < 500 || both < 40 || datasetsOnly < 100 || whestbenchOnly < 5 {
		t.Fatalf(
			"%d names: %d both, %d datasets only, %d whestbench only",
			n,
			both,
			datasetsOnly,
			whestbenchOnly,
		)
	}
}

// The refusal states the rule and a name that follows it.
func TestSplitNameRefusalSuggestsAName(t *testing.T) {
	for name, want := range map[string]string{
		"mini-a": `"mini-a" cannot be loaded: a split name is a lowercase ASCII letter ` +
			`followed by lowercase ASCII letters and digits, [a-z][a-z0-9]*`,
		"Mini_A.v2": `use "miniav2"`,
		"2024":      `use "split2024"`,
		"café":      `use "caf"`,
		"--":        `use "public"`,
		"all":       `every split at once`,
		"":          `is empty`,
		"x" + strings.Repeat("y", MaxSplitNameLen): `at most 128`,
	} {
		err := CheckSplitName(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSplitName(%q) = %v, want a message with %q", name, err, want)
		}
	}
	if err := CheckSplitName("mini-a"); !strings.Contains(err.Error(), `use "minia"`) {
		t.Errorf("mini-a: %v", err)
	}
}

// Configs keep whestbench's rule, hyphens included: datasets never reads a
// config name as a split name.
func TestValidateSplitTakesHyphenatedConfigs(t *testing.T) {
	if err := ValidateSplit("public", "full-v2", 1); err != nil {
		t.Errorf("config full-v2: %v", err)
	}
	err := ValidateSplit("mini-a", "full_v2", 1)
	fe := AsFieldErrors(err)
	if len(fe) != 2 || fe[0].Field != FieldSplit || fe[1].Field != FieldConfig {
		t.Errorf("ValidateSplit(mini-a, full_v2) = %v", err)
	}
}
