package naming

import (
	"bufio"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Lock-down values pinned by whestbench's tests/test_naming.py at faker 37.12.0.
func TestNameLockDown(t *testing.T) {
	for seed, want := range map[int64]string{
		0: "megan-chang", 1: "dennis-boone", 42: "danielle-johnson",
		100: "dustin-gibson", 9999: "mary-moore",
	} {
		if got := Name(seed); got != want {
			t.Errorf("Name(%d) = %q, want %q", seed, got, want)
		}
	}
}

// mlp_name values stored in the reference fixtures, keyed by the estimator seed
// they were derived from (testdata/whestbench-fixtures, from
// https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures).
func TestNameMatchesFixtures(t *testing.T) {
	for seed, want := range map[int64]string{
		// single_split_v3_protocol
		3622263192: "emily-hart", 3259458125: "elizabeth-rice",
		4076086378: "mary-rivera", 755867: "ann-andrews",
		// multi_split_v3.0 (protocol 2.0), public then holdout
		2749604155: "luke-martin", 480482724: "ryan-chavez",
		2543531098: "marie-ramos", 1780620601: "matthew-martin",
		1311118443: "danielle-barker", 2895795964: "gail-evans",
		3039846940: "thomas-schultz", 3051805348: "debra-davis",
		// multi_config_v3.0
		2176965858: "michelle-coleman", 1459250831: "thomas-hoffman",
		2556076278: "shelly-glenn", 4151336380: "stacy-powell",
	} {
		if got := Name(seed); got != want {
			t.Errorf("Name(%d) = %q, want %q", seed, got, want)
		}
	}
}

func TestNegativeSeedNamesLikeAbs(t *testing.T) {
	for _, s := range []int64{1, 5, 42, 1 << 31, 1<<32 + 7, math.MaxInt64} {
		if a, b := Name(-s), Name(s); a != b {
			t.Errorf("Name(%d) = %q, Name(%d) = %q; want equal", -s, a, s, b)
		}
	}
}

// names.tsv was written by testdata/gen_names.py with CPython's own random module.
func TestNamesMatchPythonOracle(t *testing.T) {
	f, err := os.Open("testdata/names.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seeds []int64
	var wantNames, wantUnique []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			t.Fatalf("names.tsv: want seed<TAB>name<TAB>unique, got %q", sc.Text())
		}
		s, err := strconv.ParseInt(cols[0], 10, 64)
		if err != nil {
			t.Fatalf("names.tsv: %v", err)
		}
		seeds = append(seeds, s)
		wantNames = append(wantNames, cols[1])
		wantUnique = append(wantUnique, cols[2])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seeds) < 3000 {
		t.Fatalf("names.tsv has %d rows, want at least 3000", len(seeds))
	}
	for i, s := range seeds {
		if got := Name(s); got != wantNames[i] {
			t.Errorf("Name(%d) = %q, python says %q", s, got, wantNames[i])
		}
	}
	unique := AssignUnique(seeds)
	for i := range seeds {
		if unique[i] != wantUnique[i] {
			t.Errorf(
				"AssignUnique row %d (seed %d) = %q, python says %q",
				i,
				seeds[i],
				unique[i],
				wantUnique[i],
			)
		}
	}
}

func TestAssignUniqueSuffixes(t *testing.T) {
	base42, base1, base2 := Name(42), Name(1), Name(2)
	got := AssignUnique([]int64{1, 42, 2, 42, -42, 42})
	want := []string{base1, base42, base2, base42 + "-2", base42 + "-3", base42 + "-4"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("AssignUnique[%d] = %q, want %q", i, got[i], want[i])
		}
	}
	if len(AssignUnique(nil)) != 0 {
		t.Error("AssignUnique(nil) should be empty")
	}
}

// whestbench's documented output shape for every name it stores.
func TestAssignUniqueShape(t *testing.T) {
	shape := regexp.MustCompile(`^[a-z]+(-[a-z]+)+(-[0-9]+)?$`)
	seeds := make([]int64, 500)
	for i := range seeds {
		seeds[i] = int64(i % 250)
	}
	seen := map[string]bool{}
	for _, n := range AssignUnique(seeds) {
		if !shape.MatchString(n) {
			t.Errorf("name %q does not match %s", n, shape)
		}
		if seen[n] {
			t.Errorf("name %q assigned twice", n)
		}
		seen[n] = true
	}
}

func BenchmarkName(b *testing.B) {
	for i := range b.N {
		Name(int64(i))
	}
}
