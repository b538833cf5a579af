package mlps_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/mlps"
)

// nMLPs folds a fuzzed count into what the parsers can be given: the CLI and
// the config bound n-mlps by MaxNMLPs before parsing a slice or a range.
func nMLPs(n int) int { return n % (bakeapi.MaxNMLPs + 1) }

// FuzzParseSlice checks that an accepted "K/N" is a non-empty range inside
// [0, n) and that the slices of one N tile [0, n) in order, each within one
// MLP of n/N.
func FuzzParseSlice(f *testing.F) {
	for _, c := range []struct {
		spec string
		n    int
	}{
		{"3/4", 10}, {" 1 / 3 ", 3}, {"0/1", 1}, {"a/b", 10}, {"0/4", 0},
	} {
		f.Add(c.spec, c.n)
	}
	f.Fuzz(func(t *testing.T, spec string, n int) {
		n = nMLPs(n)
		r, err := mlps.ParseSlice(spec, n)
		if err != nil {
			return
		}
		if r.Start < 0 || r.Start >= r.End || r.End > n {
			t.Fatalf("%q of %d = [%d, %d), not inside [0, %d)", spec, n, r.Start, r.End, n)
		}
		a, b, _ := strings.Cut(spec, "/")
		k, _ := strconv.Atoi(strings.TrimSpace(a))
		parts, _ := strconv.Atoi(strings.TrimSpace(b))
		if q := n / parts; r.Len() != q && r.Len() != q+1 {
			t.Fatalf("%q of %d holds %d MLPs, want %d or %d", spec, n, r.Len(), q, q+1)
		}
		if k == 0 && r.Start != 0 || k == parts-1 && r.End != n {
			t.Fatalf("%q of %d = [%d, %d) leaves MLPs out at the ends", spec, n, r.Start, r.End)
		}
		if k > 0 {
			prev, err := mlps.ParseSlice(fmt.Sprintf("%d/%d", k-1, parts), n)
			if err != nil || prev.End != r.Start {
				t.Fatalf(
					"%q of %d = [%d, %d) does not follow slice %d: %v %v",
					spec,
					n,
					r.Start,
					r.End,
					k-1,
					prev,
					err,
				)
			}
		}
	})
}

// FuzzParseMLPRange checks that an accepted "A-B" is a non-empty range
// inside [0, n) that includes B, and that it prints back to itself.
func FuzzParseMLPRange(f *testing.F) {
	for _, c := range []struct {
		spec string
		n    int
	}{
		{"2-5", 10}, {"0--5", 10}, {"a-b", 10}, {"+1-+2", 10}, {"0-0", 0},
	} {
		f.Add(c.spec, c.n)
	}
	f.Fuzz(func(t *testing.T, spec string, n int) {
		n = nMLPs(n)
		r, err := mlps.ParseMLPRange(spec, n)
		if err != nil {
			return
		}
		if r.Start < 0 || r.Start >= r.End || r.End > n {
			t.Fatalf("%q of %d = [%d, %d), not inside [0, %d)", spec, n, r.Start, r.End, n)
		}
		canon := fmt.Sprintf("%d-%d", r.Start, r.End-1)
		if again, err := mlps.ParseMLPRange(canon, n); err != nil || again != r {
			t.Fatalf("%q = %v prints as %q, which parses to %v, %v", spec, r, canon, again, err)
		}
	})
}

// FuzzParseSeeds checks that accepted seeds files hold n distinct seeds in
// [0, 2^63) and are identified by the sha256 of their bytes, and that the
// canonical encoding of any accepted list parses back to the same list with
// the hash generate-seeds records for it.
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{
		"[]", "[0]", "[-1]", "[1.5]", "[null]", "{}",
		string(mlps.EncodeSeeds([]int64{5, 6, 1 << 62})),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The count is checked first; taking it from the input lets the
		// fuzzer reach the per-seed checks.
		var items []json.RawMessage
		_ = json.Unmarshal(data, &items)
		n := len(items)
		sf, err := mlps.ParseSeeds("fuzz.json", data, n)
		if err != nil {
			return
		}
		if len(sf.Seeds) != n || sf.Generated {
			t.Fatalf("%q: %d seeds (generated %v), want %d", data, len(sf.Seeds), sf.Generated, n)
		}
		seen := map[int64]bool{}
		for _, s := range sf.Seeds {
			if s < 0 || seen[s] {
				t.Fatalf("%q: seed %d is negative or repeated", data, s)
			}
			seen[s] = true
		}
		if sum := sha256.Sum256(data); sf.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("%q: sha256 %s is not the file's", data, sf.SHA256)
		}
		enc := mlps.EncodeSeeds(sf.Seeds)
		again, err := mlps.ParseSeeds("canonical.json", enc, n)
		if err != nil || !slices.Equal(again.Seeds, sf.Seeds) ||
			again.SHA256 != mlps.FromSeeds(sf.Seeds).SHA256 {
			t.Fatalf("%q: canonical form %q parses to %+v, %v", data, enc, again, err)
		}
	})
}
