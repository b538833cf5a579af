package rows

import (
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seeds"
)

const (
	testSalt   = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	testDigest = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
)

// A plan's salt must be the one its Spec declares, so the metadata never
// names another salt than the one the names were derived with.
func TestPlanChecksItsSalt(t *testing.T) {
	salt, _ := seeds.ParseSalt(testSalt)
	other := seeds.GenerateSalt()
	ok := Plan{
		NMLPs:  2,
		Seeds:  mlps.FromSeeds([]int64{1, 2}),
		Range:  bakeapi.Range{End: 2},
		Split:  "public",
		Config: "default",
		Spec: bakeapi.Spec{
			Width:    2,
			Depth:    1,
			NSamples: 10,
			Sampler:  bakeapi.SamplerPhilox,
		},
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	v4 := ok
	v4.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	v4.Spec.Salt = bakeapi.Salt{SHA256: testDigest}
	v4.Salt = salt
	if err := v4.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]Plan{
		"4.0 without its salt": func() Plan { p := v4; p.Salt = seeds.Salt{}; return p }(),
		"3.0 with a salt":      func() Plan { p := ok; p.Salt = salt; return p }(),
		"another salt":         func() Plan { p := v4; p.Salt = other; return p }(),
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%s accepted", name)
		} else if strings.Contains(err.Error(), other.Hex()) ||
			strings.Contains(err.Error(), testSalt) {
			t.Errorf("%s: the error shows a salt: %v", name, err)
		}
	}
}
