package mlps

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/seeds"
)

// A slice's identities read from the blocks must be those of the whole list,
// names included: collision suffixes are assigned over all n MLPs, so MLPs
// in later blocks carry suffixes counted in earlier ones. Under protocol 4.0
// the names (and estimator seeds) are keyed by the salt.
func TestRangeIdentitiesMatchTheWholeList(t *testing.T) {
	salt, err := seeds.ParseSalt(strings.Repeat("5a", seeds.SaltBytes))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("3.0", func(t *testing.T) { testRangeIdentities(t, seeds.Salt{}) })
	t.Run("4.0", func(t *testing.T) { testRangeIdentities(t, salt) })
}

func testRangeIdentities(t *testing.T, salt seeds.Salt) {
	const n = 2*IdentityBlockSize + 300
	root := uint64(1)
	list, err := seeds.GenerateInputSeeds(n, &root)
	if err != nil {
		t.Fatal(err)
	}
	want := Identities(list, salt)
	sf := FromSeeds(list)
	blocks := IdentityBlocks(sf, salt)
	saltSum := ""
	if !salt.IsZero() {
		saltSum = salt.Digest()
		v3 := Identities(list, seeds.Salt{})
		same := 0
		for i := range want {
			if want[i].Name == v3[i].Name {
				same++
			}
		}
		if same > n/100 {
			t.Fatalf(
				"%d of %d 4.0 names equal the 3.0 ones: "+
					"the test would not see 3.0 names in a 4.0 slice",
				same,
				n,
			)
		}
	}
	if len(blocks) != IdentityBlockCount(n) || len(blocks) != 3 {
		t.Fatalf("%d blocks for %d MLPs, want 3", len(blocks), n)
	}
	suffixed := 0
	for _, m := range want[IdentityBlockSize:] {
		if strings.HasSuffix(m.Name, "-2") || strings.HasSuffix(m.Name, "-3") {
			suffixed++
		}
	}
	if suffixed == 0 {
		t.Fatal("no collision suffix beyond the first block: the test would not see a wrong name")
	}
	for _, rr := range [][2]int{
		{0, 1},
		{IdentityBlockSize - 1, IdentityBlockSize + 1},
		{n - 1, n},
		{5, 2*IdentityBlockSize + 7},
		{0, n},
	} {
		r := bakeapi.Range{Start: rr[0], End: rr[1]}
		var got []IdentityBlock
		for _, k := range IdentityBlocksOf(r) {
			data := mustJSON(t, blocks[k])
			want := ExpectedBlock{
				Key:         "b",
				Index:       k,
				NMLPs:       n,
				SeedsSHA256: sf.SHA256,
				SaltSHA256:  saltSum,
			}
			b, err := ParseIdentityBlock(data, want)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b)
		}
		ids, err := RangeIdentities(got, r, salt)
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		for i, m := range ids {
			if w := want[r.Start+i]; m.Index != w.Index || m.Seed != w.Seed || m.Name != w.Name ||
				!reflect.DeepEqual(m.Streams, w.Streams) {
				t.Fatalf("%v: MLP %d is %+v, want %+v", r, r.Start+i, m, w)
			}
		}
	}
}

func TestParseIdentityBlockRefusesAnotherBlock(t *testing.T) {
	sf := FromSeeds([]int64{1, 2, 3})
	data := mustJSON(t, IdentityBlocks(sf, seeds.Salt{})[0])
	for _, c := range []struct {
		name         string
		block, nMLPs int
		sum, want    string
	}{
		{"other seeds file", 0, 3, "beef", "belongs to seeds file"},
		{"other count", 0, 4, sf.SHA256, "want [0, 4)"},
		{"other block", 1, 2000, sf.SHA256, "want [1024, 2000)"},
	} {
		want := ExpectedBlock{
			Key:         "b",
			Index:       c.block,
			NMLPs:       c.nMLPs,
			SeedsSHA256: c.sum,
		}
		if _, err := ParseIdentityBlock(data, want); err == nil ||
			!strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	if _, err := RangeIdentities(nil, bakeapi.Range{Start: 0, End: 1}, seeds.Salt{}); err == nil {
		t.Error("identities of a range no block holds")
	}
	// 3.0 names are never read as a 4.0 block's, nor the other way round.
	salt, _ := seeds.ParseSalt(strings.Repeat("5a", seeds.SaltBytes))
	block0 := ExpectedBlock{Key: "b", NMLPs: 3, SeedsSHA256: sf.SHA256}
	as4 := block0
	as4.SaltSHA256 = salt.Digest()
	if _, err := ParseIdentityBlock(data, as4); err == nil ||
		!strings.Contains(err.Error(), "under salt sha256") {
		t.Errorf("a 3.0 block read as a 4.0 one: %v", err)
	}
	salted := IdentityBlocks(sf, salt)
	if _, err := ParseIdentityBlock(mustJSON(t, salted[0]), block0); err == nil ||
		!strings.Contains(err.Error(), "under salt sha256") {
		t.Errorf("a 4.0 block read as a 3.0 one: %v", err)
	}
	first3 := bakeapi.Range{Start: 0, End: 3}
	if _, err := RangeIdentities(salted, first3, seeds.Salt{}); err == nil {
		t.Error("4.0 names derived with 3.0 streams")
	}
}

func mustJSON(t *testing.T, b IdentityBlock) []byte {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
