package mlps

import (
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

func TestParseMLPRangeIsInclusive(t *testing.T) {
	r, err := ParseMLPRange("2-5", 10)
	if err != nil || r != (bakeapi.Range{Start: 2, End: 6}) || r.Len() != 4 {
		t.Fatalf("2-5 = %v, %v", r, err)
	}
	for _, bad := range []string{"5", "a-b", "3-2", "0-10", "-1-3"} {
		if _, err := ParseMLPRange(bad, 10); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseSeeds(t *testing.T) {
	sf, err := ParseSeeds("s.json", []byte("[1001,2002,3003,4004]\n"), 4)
	if err != nil || len(sf.Seeds) != 4 || sf.Seeds[3] != 4004 || len(sf.SHA256) != 64 {
		t.Fatalf("%+v %v", sf, err)
	}
	// 2^63 - 1 is the largest legal seed (whestbench accepts it).
	if _, err := ParseSeeds("s.json", []byte("[9223372036854775807]"), 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data string
		n    int
		want string
	}{
		{"[true]", 1, "seeds file s.json: mlp_seeds[0] must be an integer; got a boolean true"},
		{"[1.5]", 1, "seeds file s.json: mlp_seeds[0] must be an integer; got 1.5"},
		{"[1e3]", 1, "seeds file s.json: mlp_seeds[0] must be an integer; got 1e3"},
		{`["1"]`, 1, "seeds file s.json: mlp_seeds[0] must be an integer; got a string 1"},
		{"[null]", 1, "seeds file s.json: mlp_seeds[0] must be an integer; got null <nil>"},
		{"[-1]", 1, "seeds file s.json: mlp_seeds[0] = -1 is out of range [0, 2**63); " +
			"seeds must fit in an int64 column"},
		{"[9223372036854775808]", 1, "seeds file s.json: mlp_seeds[0] = 9223372036854775808 " +
			"is out of range [0, 2**63); seeds must fit in an int64 column"},
		{"[1, 2, 1]", 3, "seeds file s.json contains duplicate at indices [0, 2]: both = 1; " +
			"two MLPs with the same seed are bit-identical, regenerate the file"},
		{"[1] [2]", 1, "seeds file s.json: extra data after the JSON array; " +
			"it must hold exactly one array"},
		{"{}", 1, "seeds file s.json: must contain a JSON array; got an object"},
		{"[1,", 1, "seeds file s.json: invalid JSON (unexpected EOF); " +
			"it must be a JSON array of integers such as [1001, 2002]"},
		{"[]", 1, "seeds file s.json has 0 seeds, expected n-mlps = 1 " +
			"(the full dataset's count, also when baking a slice): " +
			"regenerate it with `whestbake dataset generate-seeds --n-mlps 1` or fix n-mlps"},
	} {
		_, err := ParseSeeds("s.json", []byte(c.data), c.n)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got error %v\nwant %s", c.data, err, c.want)
		}
	}
}

func TestGeneratedSeedsHashTheCanonicalEncoding(t *testing.T) {
	a, b := FromSeeds([]int64{5, 6}), FromSeeds([]int64{5, 6})
	if a.SHA256 != b.SHA256 || string(EncodeSeeds([]int64{5, 6})) != "[5, 6]\n" {
		t.Fatal("canonical encoding not stable")
	}
	p, err := ParseSeeds("x", EncodeSeeds([]int64{5, 6}), 2)
	if err != nil || p.SHA256 != a.SHA256 {
		t.Fatal("a written seeds file must hash like the generated list")
	}
}
