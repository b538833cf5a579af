package dataset

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

// cardColumnsGolden holds the column tables of the cards of whestbench's
// fixtures and of bakes under each seed protocol, as they were rendered
// when it was written. A change of the table made on purpose rewrites it
// with -update.
const cardColumnsGolden = "testdata/card-columns.golden"

// TestCardColumnTablesAreTheGolden renders the "## Columns" section of
// cards of every seed protocol, of every shape the fixtures have and of a
// bake, so that a change of where the table comes from cannot change it.
func TestCardColumnTablesAreTheGolden(t *testing.T) {
	cards := map[string]Metadata{}
	for _, name := range []string{"multi_config_v3.0", "multi_split_v3.0", "single_split_v3_protocol"} {
		md, err := ReadMetadata(fixtures + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		cards[name] = md
	}
	bake := testInfo(bakeapi.Spec{Width: 1024, Depth: 16}, 1000, 0, 0)
	cards["bake, protocol 3.0"] = NewBakeMetadata(bake)
	bake.Salt = &SaltRecord{Digest: testSaltDigest, Hex: testSalt}
	cards["bake, protocol 4.0"] = NewBakeMetadata(bake)
	var got strings.Builder
	for _, name := range []string{"multi_config_v3.0", "multi_split_v3.0", "single_split_v3_protocol",
		"bake, protocol 3.0", "bake, protocol 4.0"} {
		card, err := RenderCard(cards[name])
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(card, "## Columns\n")
		if !ok {
			t.Fatalf("%s: the card has no column table:\n%s", name, card)
		}
		section, _, _ = strings.Cut(section, "\n## ")
		fmt.Fprintf(&got, "=== %s\n%s\n", name, section)
	}
	if *updateGolden {
		if err := os.WriteFile(cardColumnsGolden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cardColumnsGolden)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got.String() != string(want) {
		t.Errorf("the cards' column tables differ from %s "+
			"(-update rewrites it after a change made on purpose):\n%s", cardColumnsGolden, got.String())
	}
}
